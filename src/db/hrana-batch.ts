// The remote write path's batches sent as Hrana over HTTP by outboxd itself: one request to
// `/v2/pipeline` carrying the batch (BEGIN, the statements each conditioned on the one before,
// COMMIT, ROLLBACK unless committed: what @libsql/client's `batch` sends) and the stream's close.
// Why not @libsql/client's `batch`: its JSON encoder writes every value through a hand-built
// writer and its result sets give each row named and indexed properties; a group commit's batch
// of ~150 statements cost ~16-19 µs per statement of client CPU against ~5 µs here (100 INSERTs
// of 9 arguments: 1,568-1,952 vs 494-501 µs per batch), a large share of a remote commit's CPU in
// `serve`. Everything else (interactive transactions, single reads, executeAlone) stays on
// @libsql/client.
//
// Arguments travel by position: each statement's `:name` parameters become `?1`, `?2`… in its
// SQL text (numberedParameters below, once per SQL text), so an argument is its value alone
// instead of `{"name":…,"value":…}`. A group commit's batch shrank by a third (~155 to ~103 KB for
// 165 statements): every byte of it is JSON written here, copied into the request, and parsed by
// the server, and the allocation of each body costs this thread collections too.
//
// Integers travel as Hrana integers (@libsql/client sends every JS number as a float, which
// SQLite then stores by the column's affinity); rows come back as plain objects by column name,
// as the engine driver gives them.
import { memoized } from "../lib/memo.ts";

/** A statement of a batch: its SQL and named arguments (op.ts Args). */
export interface BatchStatement {
  sql: string;
  args: Record<string, string | number | null>;
}

/** What a statement of a batch answered. */
export interface BatchAnswer {
  rows: Record<string, unknown>[];
  rowsAffected: number;
}

/**
 * A failed batch: `statementIndex` is the statement that failed (its index in the batch given,
 * everything rolled back), absent when the request itself failed or BEGIN/COMMIT did (the
 * outcome is then to be decided by the caller). `code` is the server's (SQLITE_CONSTRAINT, …).
 */
export class HranaBatchError extends Error {
  readonly code: string;
  readonly statementIndex: number | undefined;

  constructor(message: string, code: string, statementIndex?: number) {
    super(message);
    this.name = "HranaBatchError";
    this.code = code;
    this.statementIndex = statementIndex;
  }
}

type HValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

interface StepResult {
  cols: { name: string | null }[];
  rows: HValue[][];
  affected_row_count: number;
}

interface HError {
  message: string;
  code?: string | null;
}

export interface HranaBatcher {
  batch(statements: BatchStatement[], mode: "read" | "write"): Promise<BatchAnswer[]>;
  /** A write transaction over a stream (the remote path's locked batch). */
  transaction(mode: "write"): Promise<HranaTransaction>;
}

/**
 * An interactive write transaction, shaped as @libsql/client's (client-driver.ts uses either):
 * BEGIN rides with the first request (a failed BEGIN throws without a statement index); a batch
 * that ends with COMMIT also closes the stream, so no request is left to send after it; a stream
 * closed with its transaction open is rolled back by the server.
 */
export interface HranaTransaction {
  readonly closed: boolean;
  /** The statements in order, each run only if the one before succeeded. */
  batch(statements: BatchStatement[]): Promise<BatchAnswer[]>;
  rollback(): Promise<void>;
  close(): void;
}

/**
 * A batcher for a server URL (`libsql://`, `http(s)://`), or null for URLs it does not speak to
 * (`file:`, `ws(s)://`: @libsql/client serves those).
 */
export function hranaBatcher(url: string, authToken: string | undefined): HranaBatcher | null {
  const parsed = new URL(url);
  const tls = parsed.searchParams.get("tls");
  let scheme: string;
  if (parsed.protocol === "libsql:") scheme = tls === "0" ? "http:" : "https:";
  else if (parsed.protocol === "http:" || parsed.protocol === "https:") scheme = parsed.protocol;
  else return null;
  const token = authToken ?? parsed.searchParams.get("authToken") ?? undefined;
  // Resolved as @libsql/client resolves it (hrana-client's HttpStream).
  const pipeline = new URL("v2/pipeline", `${scheme}//${parsed.host}${parsed.pathname}`).toString();
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  /** One pipeline request; the results of its requests, in order. */
  const post = async (
    baton: string | null,
    requests: unknown[],
    url: string = pipeline,
  ): Promise<PipelineAnswer> => {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ baton, requests }),
    });
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw new HranaBatchError(
        `the database server answered ${response.status}: ${text.slice(0, 200)}`,
        "SERVER_ERROR",
      );
    }
    return (await response.json()) as PipelineAnswer;
  };
  return {
    async batch(statements, mode) {
      const steps: unknown[] = [
        { stmt: { sql: mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN TRANSACTION READONLY" } },
      ];
      const wired = statements.map(toWire);
      const texts = new SqlTexts(wired, 1);
      chainSteps(steps, wired, texts);
      const commit = steps.length;
      steps.push({ condition: { type: "ok", step: commit - 1 }, stmt: { sql: "COMMIT" } });
      steps.push({
        condition: { type: "not", cond: { type: "ok", step: commit } },
        stmt: { sql: "ROLLBACK" },
      });
      const answer = await post(null, [
        ...texts.stored,
        { type: "batch", batch: { steps } },
        { type: "close" },
      ]);
      const { results, errors } = batchResult(answer, texts.stored.length);
      if (errors[0]) throw failure(errors[0]);
      const answers = statementAnswers(results, errors, 1, statements.length);
      if (errors[commit] || !results[commit])
        throw failure(errors[commit] ?? { message: "COMMIT was not run" });
      return answers;
    },
    async transaction() {
      let baton: string | null = null;
      let closed = false;
      // Where the stream's later requests go: a server may name another URL for them (Turso's
      // `base_url`, routing them to the instance that holds the stream).
      let url = pipeline;
      /** The next id for a stored SQL text: ids stay taken for the stream's life. */
      let nextSqlId = 1;
      const send = async (requests: unknown[]): Promise<PipelineAnswer> => {
        if (closed) throw new HranaBatchError("the transaction is closed", "TRANSACTION_CLOSED");
        try {
          const answer = await post(baton, requests, url);
          baton = answer.baton ?? null;
          if (answer.base_url) url = new URL("v2/pipeline", answer.base_url).toString();
          if (baton === null) closed = true;
          return answer;
        } catch (error) {
          // Its outcome unknown. Close the stream, lest its transaction keep the write lock until
          // the server expires it (a stream closed in a transaction is rolled back).
          if (!closed && baton !== null) void post(baton, [{ type: "close" }], url).catch(() => undefined);
          closed = true;
          throw error;
        }
      };
      return {
        get closed() {
          return closed;
        },
        async batch(statements) {
          const first = baton === null;
          const steps: unknown[] = first ? [{ stmt: { sql: "BEGIN IMMEDIATE" } }] : [];
          const wired = statements.map(toWire);
          const texts = new SqlTexts(wired, nextSqlId);
          nextSqlId += texts.stored.length;
          chainSteps(steps, wired, texts);
          const ends = /^\s*COMMIT\s*$/i.test(statements.at(-1)?.sql ?? "");
          const answer = await send([
            ...texts.stored,
            { type: "batch", batch: { steps } },
            ...(ends ? [{ type: "close" }] : []),
          ]);
          if (ends) closed = true;
          const { results, errors } = batchResult(answer, texts.stored.length);
          if (first && errors[0]) {
            // BEGIN failed: nothing to roll back, the stream is of no further use.
            if (!closed) void send([{ type: "close" }]).catch(() => undefined);
            closed = true;
            throw failure(errors[0]);
          }
          return statementAnswers(results, errors, first ? 1 : 0, statements.length);
        },
        async rollback() {
          if (closed) return;
          if (baton === null) {
            // Nothing reached the server: no transaction to roll back.
            closed = true;
            return;
          }
          await send([{ type: "execute", stmt: { sql: "ROLLBACK" } }, { type: "close" }]);
          closed = true;
        },
        close() {
          if (closed || baton === null) {
            closed = true;
            return;
          }
          void send([{ type: "close" }]).catch(() => undefined);
          closed = true;
        },
      };
    },
  };
}

interface PipelineAnswer {
  baton?: string | null;
  base_url?: string | null;
  results: (
    | {
        type: "ok";
        response: { result?: { step_results: (StepResult | null)[]; step_errors: (HError | null)[] } };
      }
    | { type: "error"; error: HError }
  )[];
}

/**
 * sqld's caps per stream (0.24: 50 stored SQL texts, each under 5 kB): a `store_sql` beyond them
 * fails, and then the batch that names its id is refused whole (400 "SQL text N not found").
 */
const MAX_STORED_SQL = 50;
const MAX_STORED_SQL_BYTES = 4096;

/**
 * The SQL texts a batch uses more than once, stored once ahead of it (Hrana's `store_sql`, as
 * @libsql/client's SQL cache does) and named by id in its steps: a group's batch repeats the
 * same few statements for every commit in it.
 */
class SqlTexts {
  readonly stored: { type: "store_sql"; sql_id: number; sql: string }[] = [];
  readonly #ids = new Map<string, number>();

  /** `firstId`: the stream's next free id (ids stay taken for the stream's life, and count against its cap). */
  constructor(statements: WireStatement[], firstId: number) {
    const room = MAX_STORED_SQL - (firstId - 1);
    const seen = new Set<string>();
    for (const { sql } of statements) {
      if (!seen.has(sql)) seen.add(sql);
      else if (
        !this.#ids.has(sql) &&
        this.stored.length < room &&
        sql.length <= MAX_STORED_SQL_BYTES &&
        Buffer.byteLength(sql) <= MAX_STORED_SQL_BYTES
      ) {
        const id = firstId + this.stored.length;
        this.#ids.set(sql, id);
        this.stored.push({ type: "store_sql", sql_id: id, sql });
      }
    }
  }

  id(sql: string): number | undefined {
    return this.#ids.get(sql);
  }
}

/** Appends the statements as steps, each run only if the step before it succeeded. */
function chainSteps(steps: unknown[], statements: WireStatement[], texts: SqlTexts | null): void {
  for (const statement of statements) {
    const stmt = wireStatement(statement, texts?.id(statement.sql));
    steps.push(steps.length === 0 ? { stmt } : { condition: { type: "ok", step: steps.length - 1 }, stmt });
  }
}

/** The batch's result: the `at`-th result of the pipeline request (after the stored SQL texts'). */
function batchResult(
  answer: PipelineAnswer,
  at: number,
): { results: (StepResult | null)[]; errors: (HError | null)[] } {
  for (const stored of answer.results.slice(0, at)) if (stored.type === "error") throw failure(stored.error);
  const first = answer.results[at];
  if (!first) throw new HranaBatchError("the database server answered no result", "HRANA_PROTO_ERROR");
  if (first.type === "error") throw failure(first.error);
  const result = first.response.result;
  if (!result) throw new HranaBatchError("the database server answered no batch result", "HRANA_PROTO_ERROR");
  return { results: result.step_results, errors: result.step_errors };
}

/** The answers of `count` statements from step `from` on; the first that failed or did not run throws with its index. */
function statementAnswers(
  results: (StepResult | null)[],
  errors: (HError | null)[],
  from: number,
  count: number,
): BatchAnswer[] {
  const answers: BatchAnswer[] = [];
  for (let i = 0; i < count; i++) {
    const error = errors[from + i];
    if (error) throw failure(error, i);
    const result = results[from + i];
    if (!result) throw new HranaBatchError("a statement of the batch was not run", "TRANSACTION_CLOSED", i);
    answers.push({ rows: rowsOf(result), rowsAffected: result.affected_row_count });
  }
  return answers;
}

function failure(error: HError, statementIndex?: number): HranaBatchError {
  return new HranaBatchError(error.message, error.code ?? "UNKNOWN", statementIndex);
}

/** A statement as sent: its SQL with numbered parameters, its arguments by position (or by name). */
interface WireStatement {
  sql: string;
  args: BatchStatement["args"];
  /** The parameters' names by number (?1 is names[0]); null: sent by name. */
  names: string[] | null;
}

function toWire(statement: BatchStatement): WireStatement {
  const numbered = numberedParameters(statement.sql);
  return numbered
    ? { sql: numbered.sql, args: statement.args, names: numbered.names }
    : { sql: statement.sql, args: statement.args, names: null };
}

function wireStatement(statement: WireStatement, sqlId: number | undefined): unknown {
  const text = sqlId === undefined ? { sql: statement.sql } : { sql_id: sqlId };
  if (statement.names) {
    if (statement.names.length === 0) return text;
    // A name without an argument is NULL, as an unbound parameter is.
    return { ...text, args: statement.names.map((name) => wireValue(statement.args[name] ?? null)) };
  }
  const named: { name: string; value: HValue }[] = [];
  for (const name in statement.args) {
    named.push({ name, value: wireValue(statement.args[name] as string | number | null) });
  }
  return named.length > 0 ? { ...text, named_args: named } : text;
}

/**
 * The SQL with each `:name` parameter as `?N` (the same name, the same number), and the names in
 * number order; null when the text has parameters of another form (`?`, `@name`, `$name`), which
 * are then sent by name. Quoted strings and identifiers and comments are left as they are. Each
 * text rewritten once (a few dozen in practice).
 */
export const numberedParameters = memoized(numberParameters, 2_000);

function numberParameters(sql: string): { sql: string; names: string[] } | null {
  const names: string[] = [];
  const numbers = new Map<string, number>();
  let out = "";
  let from = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i] as string;
    const close = c === "'" || c === '"' || c === "`" ? c : c === "[" ? "]" : null;
    if (close) {
      // ('' and "" inside are two quoted runs back to back: the same skip covers them.)
      i = sql.indexOf(close, i + 1);
      if (i < 0) return null;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end;
    } else if (c === "/" && sql[i + 1] === "*") {
      i = sql.indexOf("*/", i + 2) + 1;
      if (i < 1) return null;
    } else if (c === "?" || c === "@" || c === "$") {
      return null;
    } else if (c === ":") {
      const name = /^[A-Za-z0-9_]+/.exec(sql.slice(i + 1, i + 65))?.[0];
      if (!name || name.length === 64) return null;
      let n = numbers.get(name);
      if (n === undefined) {
        n = names.push(name);
        numbers.set(name, n);
      }
      out += `${sql.slice(from, i)}?${n}`;
      i += name.length;
      from = i + 1;
    }
  }
  return { sql: out + sql.slice(from), names };
}

function wireValue(value: string | number | null): HValue {
  if (value === null) return { type: "null" };
  if (typeof value === "string") return { type: "text", value };
  if (Number.isSafeInteger(value)) return { type: "integer", value: String(value) };
  if (!Number.isFinite(value)) throw new RangeError("only finite numbers can be sent to the database");
  return { type: "float", value };
}

function rowsOf(result: StepResult): Record<string, unknown>[] {
  if (result.rows.length === 0) return [];
  const names = result.cols.map((col, i) => col.name ?? String(i));
  return result.rows.map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      // The first column of a name wins, as @libsql/client's rows have it.
      if (!(name in row)) row[name] = fromWire(values[i] as HValue);
    }
    return row;
  });
}

function fromWire(value: HValue): unknown {
  switch (value.type) {
    case "null":
      return null;
    case "integer": {
      const number = Number(value.value);
      if (!Number.isSafeInteger(number)) {
        throw new RangeError("the database answered an integer too large for a JavaScript number");
      }
      return number;
    }
    case "float":
    case "text":
      return value.value;
    case "blob": {
      const bytes = Buffer.from(value.base64, "base64");
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    }
  }
}
