// The remote write path's batches sent as Hrana over HTTP by outboxd itself: one request to
// `/v2/pipeline` carrying the batch (BEGIN, the statements each conditioned on the one before,
// COMMIT, ROLLBACK unless committed: what @libsql/client's `batch` sends) and the stream's close.
// Why not @libsql/client's `batch`: its JSON encoder writes every value through a hand-built
// writer and its result sets give each row named and indexed properties; a group commit's batch
// of ~150 statements cost 24 µs per statement of client CPU against 5 µs here (measured: 100
// INSERTs of 9 arguments against the simulated server, 2,403 vs 522 µs per batch), about a
// quarter of a remote commit's CPU in `serve`. Everything else (interactive transactions, single
// reads, executeAlone) stays on @libsql/client.
//
// Integers travel as Hrana integers (@libsql/client sends every JS number as a float, which
// SQLite then stores by the column's affinity); rows come back as plain objects by column name,
// as the engine driver gives them.

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
  const pipeline = `${scheme}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}/v2/pipeline`;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  return {
    async batch(statements, mode) {
      const steps: unknown[] = [
        { stmt: { sql: mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN TRANSACTION READONLY" } },
      ];
      for (const statement of statements) {
        steps.push({ condition: { type: "ok", step: steps.length - 1 }, stmt: wireStatement(statement) });
      }
      const commit = steps.length;
      steps.push({ condition: { type: "ok", step: commit - 1 }, stmt: { sql: "COMMIT" } });
      steps.push({
        condition: { type: "not", cond: { type: "ok", step: commit } },
        stmt: { sql: "ROLLBACK" },
      });
      const body = JSON.stringify({
        baton: null,
        requests: [{ type: "batch", batch: { steps } }, { type: "close" }],
      });
      const response = await fetch(pipeline, { method: "POST", headers, body });
      if (!response.ok) {
        const text = await response.text().catch(() => "");
        throw new HranaBatchError(
          `the database server answered ${response.status}: ${text.slice(0, 200)}`,
          "SERVER_ERROR",
        );
      }
      const answer = (await response.json()) as {
        results: (
          | {
              type: "ok";
              response: { result: { step_results: (StepResult | null)[]; step_errors: (HError | null)[] } };
            }
          | { type: "error"; error: HError }
        )[];
      };
      const first = answer.results[0];
      if (!first) throw new HranaBatchError("the database server answered no result", "HRANA_PROTO_ERROR");
      if (first.type === "error") throw failure(first.error);
      const { step_results: results, step_errors: errors } = first.response.result;
      if (errors[0]) throw failure(errors[0]);
      const answers: BatchAnswer[] = [];
      for (let i = 0; i < statements.length; i++) {
        const error = errors[i + 1];
        if (error) throw failure(error, i);
        const result = results[i + 1];
        if (!result) {
          throw new HranaBatchError("a statement of the batch was not run", "TRANSACTION_CLOSED", i);
        }
        answers.push({ rows: rowsOf(result), rowsAffected: result.affected_row_count });
      }
      if (errors[commit] || !results[commit])
        throw failure(errors[commit] ?? { message: "COMMIT was not run" });
      return answers;
    },
  };
}

function failure(error: HError, statementIndex?: number): HranaBatchError {
  return new HranaBatchError(error.message, error.code ?? "UNKNOWN", statementIndex);
}

function wireStatement(statement: BatchStatement): unknown {
  const named: { name: string; value: HValue }[] = [];
  for (const name in statement.args) {
    named.push({ name, value: wireValue(statement.args[name] as string | number | null) });
  }
  return named.length > 0 ? { sql: statement.sql, named_args: named } : { sql: statement.sql };
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
