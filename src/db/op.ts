// A storage operation is written once, as a generator that yields the statements it needs
// and receives their results. Each driver runs it its own way: the engine driver on prepared
// statements without leaving the event loop turn, the client driver by awaiting
// @libsql/client. This keeps the logic of every operation in one place for both drivers,
// and sidesteps drizzle's trap where an async callback on a synchronous engine commits early.

export type Args = Record<string, string | number | null>;
export type Row = Record<string, unknown>;

export interface Statement {
  sql: string;
  args: Args;
  /** `all` returns rows, `get` the first row or undefined, `run` the number of changed rows. */
  kind: "all" | "get" | "run";
  /**
   * A read whose answer may be shared by every operation of one group commit (the Writer
   * runs it once per batch): for reads of small, rarely written tables such as endpoints.
   */
  batchShared?: boolean;
}

export type Op<T> = Generator<Statement, T, unknown>;

export function* all<R = Row>(sql: string, args: Args = {}): Op<R[]> {
  return (yield { sql, args, kind: "all" }) as R[];
}

/** `all`, answered once per group commit (see Statement.batchShared). */
export function* allBatchShared<R = Row>(sql: string, args: Args = {}): Op<R[]> {
  return (yield { sql, args, kind: "all", batchShared: true }) as R[];
}

export function* get<R = Row>(sql: string, args: Args = {}): Op<R | undefined> {
  return (yield { sql, args, kind: "get" }) as R | undefined;
}

export function* run(sql: string, args: Args = {}): Op<number> {
  return (yield { sql, args, kind: "run" }) as number;
}

/** Something that executes one statement, synchronously (engine) or not (client). */
export type Execute = (statement: Statement) => unknown;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function resume<T>(op: Op<T>, outcome: Outcome): IteratorResult<Statement, T> {
  return outcome.ok ? op.next(outcome.value) : op.throw(outcome.error);
}

/** Runs an operation whose executor may return promises (@libsql/client). */
export async function runOp<T>(op: Op<T>, execute: Execute): Promise<T> {
  let step = op.next();
  while (!step.done) {
    let outcome: Outcome;
    try {
      outcome = { ok: true, value: await execute(step.value) };
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
    let outcome: Outcome;
    try {
      outcome = { ok: true, value: execute(step.value) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    step = resume(op, outcome);
  }
  return step.value;
}
