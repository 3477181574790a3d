// A SIMULATED network between outboxd and a remote libSQL server, for tests and benchmarks only.
// No libSQL server can be installed on the development and CI hosts, so the remote write path
// runs through @libsql/client on a local `file:` database, wrapped here. The wrapper counts the
// requests Hrana-over-HTTP would send (one per `execute`, `batch` or `executeMultiple`, and per
// statement, commit or rollback of an interactive transaction, whose BEGIN rides with its first
// statement), waits a fixed delay on each (the round trip), and can lose one on purpose, before
// it reaches the database or after (the answer lost: the outcome unknown to the client).
// What it does not simulate: bandwidth, the server's own work, the lock held across an
// interactive transaction's round trips by ANOTHER process's network (each process waits its own
// delay, so a lock held across round trips is held that long here too).
//
// With `server` (OUTBOXD_SIMULATED_SERVER in network-preload.ts), the requests go, after the same
// delay, to a simulated server process (sim-server.ts) that runs them on the database file for
// every outboxd process at once, as a libSQL server would on another machine; otherwise each
// process runs them itself through @libsql/client on the local file (the tests' default).
import {
  type Client,
  type InStatement,
  LibsqlBatchError,
  LibsqlError,
  type ResultSet,
  type Transaction,
} from "@libsql/client";
import { clientSeam } from "../../src/db/client-driver.ts";
import type { WireError, WireRequest, WireResponse, WireResult, WireStatement } from "./sim-server.ts";

export type RequestKind = "execute" | "read-batch" | "write-batch" | "batch" | "tx-statement" | "tx-end";

export interface Network {
  /** Requests sent so far, by kind. */
  counts: Record<RequestKind, number>;
  /** Time spent executing them on the database (the "server"), ms, by kind: the delay excluded. */
  serverMs: Record<RequestKind, number>;
  /** Statements they carried, by kind. */
  statements: Record<RequestKind, number>;
  /** Requests answered with an error (a write batch whose guard failed, say), by kind. */
  failed: Record<RequestKind, number>;
  /** Every request's kind as it reached the database ("sent") and as it was answered, in order. */
  trace: string[];
  total(): number;
  reset(): void;
  /** The next request of this kind fails: before it reaches the database, or after it ran there. */
  failNext(kind: RequestKind, when: "before" | "after"): void;
  /** Runs `action` (another machine's write, say) just before the next request of this kind is sent. */
  beforeNext(kind: RequestKind, action: () => Promise<void> | void): void;
  /** Runs `action` once the next request of this kind has been answered, before its caller hears. */
  afterNext(kind: RequestKind, action: () => Promise<void> | void): void;
  /** Stops wrapping new clients. */
  uninstall(): void;
}

export class SimulatedNetworkError extends Error {}

/** Wraps every client the client driver opens from now on. */
export function installNetwork(options: { delayMs: number; server?: string | undefined }): Network {
  const counts = emptyCounts();
  const serverMs = emptyCounts();
  const statements = emptyCounts();
  const failed = emptyCounts();
  const trace: string[] = [];
  const failures: { kind: RequestKind; when: "before" | "after" }[] = [];
  const actions: { kind: RequestKind; action: () => Promise<void> | void }[] = [];
  const afterActions: { kind: RequestKind; action: () => Promise<void> | void }[] = [];
  const request = async <T>(kind: RequestKind, send: () => Promise<T>, carried = 1): Promise<T> => {
    counts[kind] += 1;
    statements[kind] += carried;
    if (options.delayMs > 0) await Bun.sleep(options.delayMs);
    const hook = actions.findIndex((a) => a.kind === kind);
    if (hook >= 0) await actions.splice(hook, 1)[0]?.action();
    const at = failures.findIndex((f) => f.kind === kind);
    const failure = at >= 0 ? failures.splice(at, 1)[0] : undefined;
    if (failure?.when === "before")
      throw new SimulatedNetworkError(`simulated: ${kind} request lost on the way`);
    const started = performance.now();
    let result: T;
    // (a long run keeps only the latest)
    if (trace.length > 10_000) trace.splice(0, 5_000);
    trace.push(`${kind} sent`);
    try {
      result = await send();
    } catch (error) {
      failed[kind] += 1;
      trace.push(`${kind} failed`);
      throw error;
    }
    trace.push(`${kind} answered`);
    const after = afterActions.findIndex((a) => a.kind === kind);
    if (after >= 0) await afterActions.splice(after, 1)[0]?.action();
    serverMs[kind] += performance.now() - started;
    if (failure?.when === "after")
      throw new SimulatedNetworkError(`simulated: ${kind} answer lost on the way back`);
    return result;
  };

  const wrapTransaction = (tx: Transaction): Transaction =>
    new Proxy(tx, {
      get(target, property) {
        if (property === "execute" || property === "batch" || property === "executeMultiple") {
          return (...args: unknown[]) =>
            request("tx-statement", () =>
              (target[property] as (...a: unknown[]) => Promise<unknown>)(...args),
            );
        }
        if (property === "commit" || property === "rollback") {
          return () => request("tx-end", () => target[property]());
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });

  clientSeam.wrap = (local: Client): Client => {
    const client = options.server ? simulatedServerClient(options.server, local) : local;
    return new Proxy(client, {
      get(target, property) {
        if (property === "execute" || property === "executeMultiple") {
          return (...args: unknown[]) =>
            request("execute", () => (target[property] as (...a: unknown[]) => Promise<unknown>)(...args));
        }
        if (property === "batch") {
          return (batch: Parameters<Client["batch"]>[0], mode?: Parameters<Client["batch"]>[1]) =>
            request(
              mode === "read" ? "read-batch" : mode === "write" ? "write-batch" : "batch",
              () => target.batch(batch, mode),
              batch.length,
            );
        }
        if (property === "transaction") {
          // Hrana sends BEGIN with the transaction's first statement: opening it costs no request.
          return async (mode?: "write" | "read" | "deferred") =>
            wrapTransaction(await target.transaction(mode));
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };

  return {
    counts,
    serverMs,
    statements,
    failed,
    trace,
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    reset() {
      for (const record of [counts, serverMs, statements, failed]) Object.assign(record, emptyCounts());
      trace.length = 0;
    },
    failNext(kind, when) {
      failures.push({ kind, when });
    },
    beforeNext(kind, action) {
      actions.push({ kind, action });
    },
    afterNext(kind, action) {
      afterActions.push({ kind, action });
    },
    uninstall() {
      clientSeam.wrap = null;
    },
  };
}

function emptyCounts(): Record<RequestKind, number> {
  return { execute: 0, "read-batch": 0, "write-batch": 0, batch: 0, "tx-statement": 0, "tx-end": 0 };
}

/**
 * A client of the simulated server (sim-server.ts): what @libsql/client's remote client does
 * (requests, streams, result sets with named and indexed columns, LibsqlError and
 * LibsqlBatchError), over a Unix socket instead of Hrana over HTTP.
 */
function simulatedServerClient(socket: string, local: Client): Client {
  // The local connection @libsql/client opened on the file is not used: the server's is.
  local.close();
  const post = (request: WireRequest): Promise<WireResponse> => serverConnection(socket).send(request);
  const answer = (response: WireResponse): ResultSet[] => {
    if (!response.ok) throw errorOf(response.error);
    return response.results.map(resultSet);
  };
  let closed = false;
  let streams = 0;
  const client = {
    protocol: "http",
    get closed() {
      return closed;
    },
    async execute(stmt: InStatement | string, args?: unknown) {
      return answer(await post({ op: "execute", stmt: wire(stmt, args) }))[0] as ResultSet;
    },
    async batch(stmts: InStatement[], mode: "read" | "write" | "deferred" = "deferred") {
      return answer(await post({ op: "batch", mode, stmts: stmts.map((s) => wire(s)) }));
    },
    async transaction(_mode?: "write" | "read" | "deferred") {
      const stream = `${process.pid}-${++streams}-${Math.random().toString(36).slice(2)}`;
      let done = false;
      const send = async (request: Omit<Extract<WireRequest, { op: "tx" }>, "op" | "stream">) => {
        if (done) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
        const response = await post({ op: "tx", stream, ...request });
        if (response.inTransaction === false) done = true;
        return answer(response);
      };
      const tx = {
        get closed() {
          return done;
        },
        async execute(stmt: InStatement | string, args?: unknown) {
          return (await send({ stmts: [wire(stmt, args)] }))[0] as ResultSet;
        },
        async batch(stmts: InStatement[]) {
          return send({ stmts: stmts.map((s) => wire(s)), batch: true });
        },
        async executeMultiple() {
          throw new Error("executeMultiple: not simulated");
        },
        async commit() {
          await send({ end: "commit" });
          done = true;
        },
        async rollback() {
          if (done) return;
          await send({ end: "rollback" });
          done = true;
        },
        close() {
          if (done) return;
          done = true;
          void post({ op: "tx", stream, end: "rollback" }).catch(() => undefined);
        },
      };
      return tx as unknown as Transaction;
    },
    async executeMultiple() {
      throw new Error("executeMultiple: not simulated");
    },
    async migrate() {
      throw new Error("migrate: not simulated");
    },
    async sync() {
      throw new Error("sync: not simulated");
    },
    async reconnect() {
      closed = false;
    },
    close() {
      closed = true;
    },
  };
  return client as unknown as Client;
}

/**
 * One connection per process to the simulated server: requests and answers as lines of JSON,
 * each tagged with an id (what a real client's HTTP connection pool does, without its cost: the
 * simulation counts round trips and their delay, not HTTP's own CPU).
 */
interface ServerConnection {
  send(request: WireRequest): Promise<WireResponse>;
}

const connections = new Map<string, ServerConnection>();

function serverConnection(path: string): ServerConnection {
  const known = connections.get(path);
  if (known) return known;
  const pending = new Map<number, (response: WireResponse) => void>();
  let nextId = 0;
  let buffered = "";
  const decoder = new TextDecoder();
  const socket = Bun.connect({
    unix: path,
    socket: {
      data(_socket, chunk) {
        buffered += decoder.decode(chunk, { stream: true });
        let end = buffered.indexOf("\n");
        while (end >= 0) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          const { id, response } = JSON.parse(line) as { id: number; response: WireResponse };
          pending.get(id)?.(response);
          pending.delete(id);
          end = buffered.indexOf("\n");
        }
      },
      drain(open) {
        flush(open);
      },
      close() {
        connections.delete(path);
        const error = {
          ok: false as const,
          error: { message: "the simulated server closed", code: "SERVER_CLOSED" },
          serverMs: 0,
        };
        for (const resolve of pending.values()) resolve(error);
        pending.clear();
      },
    },
  });
  // What the socket did not take yet (a partial write): written on its next drain.
  let queued = Buffer.alloc(0);
  function flush(open: Bun.Socket<undefined>) {
    if (queued.length === 0) return;
    const written = open.write(queued);
    queued = queued.subarray(Math.max(0, written));
  }
  const connection: ServerConnection = {
    async send(request) {
      const id = nextId++;
      const answered = new Promise<WireResponse>((resolve) => pending.set(id, resolve));
      const line = `${JSON.stringify({ id, request })}\n`;
      const open = await socket;
      if (queued.length > 0) queued = Buffer.concat([queued, Buffer.from(line)]);
      else {
        const written = open.write(line);
        if (written < line.length || Buffer.byteLength(line) > written) {
          queued = Buffer.from(line).subarray(Math.max(0, written));
        }
      }
      flush(open);
      return answered;
    },
  };
  connections.set(path, connection);
  return connection;
}

function wire(stmt: InStatement | string, args?: unknown): WireStatement {
  if (typeof stmt === "string") return { sql: stmt, args: (args ?? []) as WireStatement["args"] };
  if (Array.isArray(stmt)) return { sql: stmt[0], args: (stmt[1] ?? []) as WireStatement["args"] };
  const { sql } = stmt as { sql: string };
  const values = (stmt as { args?: unknown }).args;
  if (values === undefined) return { sql };
  if (Array.isArray(values)) return { sql, args: values.map(wireValue) };
  const named: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values as Record<string, unknown>))
    named[name] = wireValue(value);
  return { sql, args: named };
}

function wireValue(value: unknown): unknown {
  if (value instanceof ArrayBuffer) return { $blob: Buffer.from(value).toString("base64") };
  if (value instanceof Uint8Array) return { $blob: Buffer.from(value).toString("base64") };
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Date) return value.valueOf();
  return value;
}

/** A result set as @libsql/client builds it: each row with its columns by name (enumerable) and by index. */
function resultSet(result: WireResult): ResultSet {
  const { columns } = result;
  const rows = result.rows.map((values) => {
    const row = {};
    Object.defineProperty(row, "length", { value: values.length });
    for (let i = 0; i < values.length; i++) {
      let value = values[i];
      if (value !== null && typeof value === "object" && "$blob" in value) {
        const bytes = Buffer.from((value as { $blob: string }).$blob, "base64");
        value = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      }
      Object.defineProperty(row, i, { value });
      const column = columns[i] as string;
      if (!Object.hasOwn(row, column)) {
        Object.defineProperty(row, column, { value, enumerable: true, configurable: true, writable: true });
      }
    }
    return row;
  });
  return {
    columns,
    columnTypes: columns.map(() => ""),
    rows,
    rowsAffected: result.rowsAffected,
    lastInsertRowid: result.lastInsertRowid === null ? undefined : BigInt(result.lastInsertRowid),
    toJSON: () => ({ ...result }),
  } as unknown as ResultSet;
}

function errorOf(error: WireError): LibsqlError {
  return error.index === undefined
    ? new LibsqlError(error.message, error.code, error.extendedCode, error.rawCode)
    : new LibsqlBatchError(error.message, error.index, error.code, error.extendedCode, error.rawCode);
}
