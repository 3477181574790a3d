// A storage operation is written once, as a generator that yields the statements it needs
// and receives their results. Each driver runs it its own way: the engine driver on prepared
// statements without leaving the event loop turn, the client driver by awaiting
// @libsql/client. This keeps the logic of every operation in one place for both drivers,
// and sidesteps drizzle's trap where an async callback on a synchronous engine commits early.
import { memoized } from "../lib/memo.ts";

export type Args = Record<string, string | number | null>;
export type Row = Record<string, unknown>;

export interface Statement {
  sql: string;
  args: Args;
  /**
   * The same arguments by position, in the order SQLite numbers the text's parameters (first
   * appearance), when the statement has them so (deliveries/rows.ts: many rows as a VALUES list).
   * A local engine binds these instead of `args`, which it would have to look up name by name.
   */
  values?: readonly (string | number | null)[];
  /** `all` returns rows, `get` the first row or undefined, `run` the number of changed rows. */
  kind: "all" | "get" | "run";
  /**
   * A read whose answer may be shared by every operation of one group commit (the Writer runs
   * it once per batch, until a statement of the batch writes this table): for reads of small,
   * rarely written tables such as endpoints.
   */
  batchShared?: { table: string };
  /**
   * A write whose row count the operation never looks at (`exec`): the remote write path then
   * need not check the count it answered (remote-writer.ts).
   */
  blind?: boolean;
  /** The UPDATE of `updateOrInsert`: its count only decides whether the INSERT runs. */
  orInsert?: boolean;
  /**
   * A write with RETURNING whose rows are a hint the operation can do without (`allHinted`): the
   * remote write path, which cannot answer a write's rows before the batch runs, answers [] and
   * lets the operation go on.
   */
  hint?: boolean;
}

/**
 * The reads an operation is about to make, announced before its first statement. Local drivers
 * ignore it (answered with undefined, nothing executed); the remote write path
 * (remote-writer.ts) runs the reads of a whole group in one request and answers the operation's
 * later identical reads from it, so a group commit costs the same few round trips whatever its size.
 */
export interface Prefetch {
  kind: "prefetch";
  statements: Statement[];
}

/** An entry of the ledger's hash chain (DESIGN §13): its position and hash. */
export interface Link {
  seq: number;
  hash: string;
}

/**
 * An operation's entry in the ledger's hash chain, placed by whoever runs the group it is in:
 * the chain's head is read once per group (`head`, a `get` answering `{seq, hash}` or nothing),
 * and each entry's row is built on the one written before it (`append`), in the order the rows
 * are written. The writer (writer.ts) does that in its transaction, the remote write path
 * (remote-writer.ts) when it builds the group's write batch, and a lone operation reads the head
 * itself (`chainAlone`). The operation is answered with nothing and must not depend on where its
 * entry went: the remote path places it only after the operation has run.
 */
export interface ChainStep {
  kind: "chain";
  head: Statement;
  /** The entry's row on top of `previous` (undefined: the chain is empty). May throw. */
  append(previous: Link | undefined): { link: Link; statement: Statement };
}

export type Step = Statement | Prefetch | ChainStep;

export type Op<T> = Generator<Step, T, unknown>;

export type Outcome<T = unknown> = { ok: true; value: T } | { ok: false; error: unknown };

export function* all<R = Row>(sql: string, args: Args = {}): Op<R[]> {
  return (yield { sql, args, kind: "all" }) as R[];
}

/** `all` for an UPDATE … RETURNING whose rows are only a hint (see Statement.hint). */
export function* allHinted<R = Row>(sql: string, args: Args = {}): Op<R[]> {
  return (yield { sql, args, kind: "all", hint: true }) as R[];
}

/** `all` of `table` only, answered once per group commit (see Statement.batchShared). */
export function* allBatchShared<R = Row>(table: string, sql: string, args: Args = {}): Op<R[]> {
  return (yield { sql, args, kind: "all", batchShared: { table } }) as R[];
}

/**
 * writesTable's answers per table and statement text (it runs after every statement of a group).
 * Statement texts are the code's own, a bounded set; the memo's cap bounds it anyway.
 */
const writeAnswers = new Map<string, (sql: string) => boolean>();

/**
 * Whether `sql` may write `table` (INSERT INTO, UPDATE, DELETE FROM, REPLACE INTO it, anywhere
 * in the statement, so a CTE before the UPDATE counts too). Errs on the side of yes.
 */
export function writesTable(sql: string, table: string): boolean {
  let writes = writeAnswers.get(table);
  if (!writes) {
    const pattern = new RegExp(
      `\\b(?:INSERT(?:\\s+OR\\s+\\w+)?\\s+INTO|REPLACE\\s+INTO|UPDATE(?:\\s+OR\\s+\\w+)?|DELETE\\s+FROM)\\s+["\\x60\\[]?${table}\\b`,
      "i",
    );
    writes = memoized((text: string) => pattern.test(text), 4096);
    writeAnswers.set(table, writes);
  }
  return writes(sql);
}

export function* get<R = Row>(sql: string, args: Args = {}): Op<R | undefined> {
  return (yield { sql, args, kind: "get" }) as R | undefined;
}

export function* run(sql: string, args: Args = {}): Op<number> {
  return (yield { sql, args, kind: "run" }) as number;
}

/** `run` for a write whose row count does not matter to the operation (see Statement.blind). */
export function* exec(sql: string, args: Args = {}): Op<void> {
  yield { sql, args, kind: "run", blind: true };
}

/**
 * An UPDATE and, when it changed no row, an INSERT with the same arguments (cheaper in SQLite
 * than an upsert when the row mostly exists). Here both run one after the other; the remote
 * write path sends them together, the INSERT conditioned on the UPDATE's count (remote-writer.ts).
 */
export function* updateOrInsert(update: string, insert: string, args: Args): Op<void> {
  const changed = yield { sql: update, args, kind: "run", orInsert: true };
  if (changed === 0) yield* run(insert, args);
}

/** Appends to the ledger's chain (see ChainStep). */
export function* chain(step: Omit<ChainStep, "kind">): Op<void> {
  yield { kind: "chain", ...step };
}

/** A chain step run on its own: the head read, then the row on top of it. */
export function* chainAlone(step: ChainStep): Op<void> {
  const head = yield* get<Link>(step.head.sql, step.head.args);
  yield step.append(head).statement;
}

/** Announces reads (see Prefetch); a no-op on local files. */
export function* prefetch(statements: Statement[]): Op<void> {
  if (statements.length > 0) yield { kind: "prefetch", statements };
}

/** Something that executes one statement, synchronously (engine) or not (client). */
export type Execute = (statement: Statement) => unknown;

function resume<T>(op: Op<T>, outcome: Outcome): IteratorResult<Step, T> {
  return outcome.ok ? op.next(outcome.value) : op.throw(outcome.error);
}

/** Runs an operation whose executor may return promises (@libsql/client). */
export async function runOp<T>(op: Op<T>, execute: Execute): Promise<T> {
  let step = op.next();
  while (!step.done) {
    let outcome: Outcome;
    try {
      const statement = step.value;
      outcome = {
        ok: true,
        value:
          statement.kind === "prefetch"
            ? undefined
            : statement.kind === "chain"
              ? await runOp(chainAlone(statement), execute)
              : await execute(statement),
      };
    } catch (error) {
      outcome = { ok: false, error };
    }
    step = resume(op, outcome);
  }
  return step.value;
}

/** Runs an operation on a synchronous executor (the engine) without yielding to the event loop. */
export function runOpSync<T>(op: Op<T>, execute: Execute): T {
  let step = op.next();
  while (!step.done) {
    const statement = step.value;
    // No outcome object per statement (runOp's): this loop runs every statement of a group commit.
    let value: unknown;
    try {
      value =
        statement.kind === "prefetch"
          ? undefined
          : statement.kind === "chain"
            ? runOpSync(chainAlone(statement), execute)
            : execute(statement);
    } catch (error) {
      step = op.throw(error);
      continue;
    }
    step = op.next(value);
  }
  return step.value;
}
