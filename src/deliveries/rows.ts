// Many rows as one statement's argument: a VALUES list whose values are bound one by one, by
// position, instead of one JSON text that SQLite parses again for every `value ->> k` it reads.
// In SQLite 3.45 (libsql) and 3.54 (bun:sqlite) alike each `->>` re-parses its row's JSON text:
// 64 rows of 7 columns cost 120-200 us through json_each, 60-80 us as VALUES bound by position
// through libsql and 25-30 us through bun:sqlite. A completion batch reads ~15 such values per delivery (attempts, delivered rows,
// promoted queues).
//
// The statement's text starts `WITH name(columns) AS (VALUES (:r0, :r1, …), …)`: local engine
// drivers bind Statement.values by position; every other driver (the client driver, the remote
// write path) binds the same values by name from Statement.args, made only when one asks for it.
// A list joined to a table names its key `+list.column` (`deliveries.rowid = +b.rid`): SQLite's
// planner guesses a list of hundreds of rows is big enough to scan the table against an
// automatic index of the list (the promotion did so for 256 queues: a scan of every delivery);
// the `+` leaves it one plan, the list as the outer loop and one seek per row.
import type { Args, Statement } from "../db/op.ts";
import { parameterOrder } from "../db/parameters.ts";
import { memoized } from "../lib/memo.ts";

type Value = string | number | null;

/**
 * The most rows one statement takes (callers split longer lists: `chunks`). SQLite's parser looks
 * every `:name` up among those before it, so preparing a list costs quadratically in its
 * parameters: 64 rows of 8 columns ~1.2 ms, 128 rows ~4 ms, 256 rows ~16 ms (libsql, this VM).
 * Each text is prepared once per connection and kept, so lists of at most 64 rows keep both the
 * preparing and the cache small; a batch of hundreds of outcomes is then a few statements.
 */
export const MAX_ROWS = 64;

/** Rows in lists of at most MAX_ROWS. */
export function chunks<T>(rows: readonly T[]): T[][] {
  if (rows.length <= MAX_ROWS) return rows.length === 0 ? [] : [rows as T[]];
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += MAX_ROWS) out.push(rows.slice(i, i + MAX_ROWS));
  return out;
}

/**
 * How many rows a list of `n` is padded to (with rows of NULLs): exact up to 8, then the next
 * multiple of 8. Each count is a statement text of its own: at most 15 per statement, and a list
 * binds at most 7 rows of NULLs.
 */
export function paddedCount(n: number): number {
  return n <= 8 ? n : Math.ceil(n / 8) * 8;
}

/** The VALUES list text of `count` rows of `width` columns, by shape. */
const lists = new Map<string, string>();

function valuesList(width: number, count: number): string {
  const key = `${width}:${count}`;
  let text = lists.get(key);
  if (text === undefined) {
    const rows: string[] = [];
    for (let r = 0; r < count; r++) {
      const row: string[] = [];
      for (let c = 0; c < width; c++) row.push(`:r${r * width + c}`);
      rows.push(`(${row.join(", ")})`);
    }
    text = rows.join(", ");
    lists.set(key, text);
  }
  return text;
}

/**
 * Each statement's text, made once per shape and then handed out as the same string: a text of
 * thousands of characters made anew at every call is a string the engine driver's cache of
 * prepared statements (and every other map keyed by the text) must flatten, hash and compare
 * whole at every lookup; the same string object carries its hash and compares at once. Kept per
 * `rest` (one of the code's own texts), then by count and head.
 */
const textsFor = memoized((_rest: string) => new Map<string, string>(), 256);

function statementText(name: string, columns: readonly string[], count: number, rest: string): string {
  const head = `${name}(${columns.join(", ")})`;
  const texts = textsFor(rest);
  const key = `${count} ${head}`;
  let sql = texts.get(key);
  if (sql === undefined) {
    sql = `WITH ${head} AS (VALUES ${valuesList(columns.length, count)}) ${rest}`;
    texts.set(key, sql);
  }
  return sql;
}

/** The `:name` parameters of a rest's text in the order SQLite numbers them (the driver's rule). */
const parameterNames = memoized(parameterOrder, 1024);

/** What a rows statement is, beside its text and arguments. */
export type RowsKind = Pick<Statement, "kind" | "blind" | "hint">;

/**
 * The statement `WITH name(columns) AS (VALUES <rows>)` followed by `rest` (which may go on with
 * `, other AS (…)` and must bind its own parameters by `:name`, from `args`). The rows are padded
 * with rows of NULLs (paddedCount): `rest` must skip a row whose first column is NULL (a join on
 * it, or `WHERE first IS NOT NULL`). At most MAX_ROWS rows. `rest` is one of the code's own
 * texts, never made from data: each text is kept per `rest` and count (statementText).
 */
export function rowsStatement(
  name: string,
  columns: readonly string[],
  rows: readonly (readonly Value[])[],
  rest: string,
  args: Args,
  kind: RowsKind,
): Statement {
  if (rows.length > MAX_ROWS) throw new Error(`rowsStatement: ${rows.length} rows (at most ${MAX_ROWS})`);
  const width = columns.length;
  const count = paddedCount(rows.length);
  const sql = statementText(name, columns, count, rest);
  const flat: Value[] = new Array(count * width).fill(null);
  let i = 0;
  for (const row of rows) {
    for (let c = 0; c < width; c++) flat[i + c] = row[c] ?? null;
    i += width;
  }
  // The rest's own arguments follow the rows' (numbered after them). One missing: no positional
  // list, so the driver's named binding refuses the statement as it should.
  const names = parameterNames(rest);
  const tail = names?.map((n) => args[n]);
  const values = tail?.every((v) => v !== undefined) ? flat.concat(tail as Value[]) : undefined;
  let named: Args | undefined;
  return {
    sql,
    kind: kind.kind,
    ...(kind.blind ? { blind: true } : {}),
    ...(kind.hint ? { hint: true } : {}),
    ...(values ? { values } : {}),
    // By name only for a driver that asks (not the engine's): made once, on demand.
    get args(): Args {
      if (named === undefined) {
        named = { ...args };
        for (let v = 0; v < count * width; v++) named[`r${v}`] = flat[v] ?? null;
      }
      return named;
    },
  };
}
