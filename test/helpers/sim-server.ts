// A SIMULATED libSQL server for benchmarks (tests and benchmarks only): one process that owns a
// local database file and runs the requests of every outboxd process pointed at it, as a libSQL
// server (sqld) or Turso would on another machine. No libSQL server can be installed on the
// development and CI hosts; this stands in for one. network.ts sends it the requests the client
// driver makes (each after the simulated round trip), as JSON over a Unix socket:
//   - execute: one statement in autocommit (a read on the read connection; anything else on
//     the write connection, in turn with the writers below);
//   - batch: the statements as one transaction, "read" (one snapshot) or "write" (BEGIN
//     IMMEDIATE … COMMIT, rolled back at the first failing statement, whose index is answered);
//   - tx: one request of an interactive transaction (a stream): BEGIN rides with its first
//     statement, and the stream holds the write lock until its commit or rollback.
// Writers take turns in a queue (as sqld does), not through SQLite's busy handler: a batch or a
// stream waits its turn without sleeping, and runs as soon as the one before it ends. Reads run
// on a thread of their own (sim-server-reader.ts), so they never wait behind a write batch.
//
// The SQLite work is the same as the @libsql/client driver's on a local file: the same
// statements, transactions and PRAGMAs on the same file. Durability is the server's, as on a real
// one: FULL by default (a client's `PRAGMA synchronous` is answered and ignored), done as the
// engine driver does it (src/db/wal-sync.ts): the WAL is synced off the event loop after COMMIT
// and a commit is answered once it is on disk, while reads and the next batches run meanwhile,
// as on a server whose fsync does not stop its other connections. (So a read may see a commit
// whose sync is still running: unlike outboxd's own engine driver, this does not hold such
// reads back; nothing measured here depends on it, and the tests do not use this server.)
// Statements are prepared once per connection and kept, as a server keeps them; the answers
// travel as JSON (columns and rows as arrays).
//
//   bun test/helpers/sim-server.ts <database file> <socket path> [FULL|NORMAL]
// prints "ready" on stdout once it accepts requests; SIGTERM ends it.
import { unlinkSync } from "node:fs";
import Database from "libsql";
import { WalSync } from "../../src/db/wal-sync.ts";

type Connection = Database.Database;
type Prepared = Database.Statement<unknown[]>;
type Args = Record<string, unknown> | unknown[];

export interface WireStatement {
  sql: string;
  args?: Args;
}

/** A result set on the wire: rows as arrays, blobs as `{ $blob: base64 }`. */
export interface WireResult {
  columns: string[];
  rows: unknown[][];
  rowsAffected: number;
  lastInsertRowid: number | null;
}

export interface WireError {
  message: string;
  code: string;
  extendedCode?: string;
  rawCode?: number;
  /** The failing statement of a batch. */
  index?: number;
}

export type WireRequest =
  | { op: "execute"; stmt: WireStatement }
  | { op: "batch"; mode: "read" | "write" | "deferred"; stmts: WireStatement[] }
  | {
      op: "tx";
      stream: string;
      /** The statements of this request (one execute, or a batch of them). */
      stmts?: WireStatement[];
      batch?: boolean;
      end?: "commit" | "rollback";
    };

export type WireResponse =
  | { ok: true; results: WireResult[]; inTransaction?: boolean; serverMs: number }
  | { ok: false; error: WireError; inTransaction?: boolean; serverMs: number };

/** A stream that holds the write lock and hears nothing for this long is rolled back (sqld: baton expiry). */
const STREAM_IDLE_MS = 10_000;

export class Connections {
  readonly read: Connection;
  readonly write: Connection;
  readonly #prepared = new Map<
    Connection,
    Map<string, { stmt: Prepared; reader: boolean; columns: string[] }>
  >();

  constructor(path: string) {
    this.write = open(path);
    this.read = open(path);
  }

  prepare(db: Connection, sql: string): { stmt: Prepared; reader: boolean; columns: string[] } {
    let cache = this.#prepared.get(db);
    if (!cache) {
      cache = new Map();
      this.#prepared.set(db, cache);
    }
    let entry = cache.get(sql);
    if (!entry) {
      const stmt = db.prepare(sql);
      const reader = stmt.reader;
      if (reader) stmt.raw(true);
      entry = { stmt, reader, columns: reader ? stmt.columns().map((c) => c.name) : [] };
      // PRAGMAs change settings: prepare them anew each time.
      if (!/^\s*PRAGMA\b/i.test(sql)) cache.set(sql, entry);
    }
    return entry;
  }

  /** Whether a statement only reads (it may then run on the read connection, outside the queue). */
  isRead(sql: string): boolean {
    if (!/^\s*SELECT\b/i.test(sql)) return false;
    try {
      return this.prepare(this.read, sql).reader;
    } catch {
      // (no such table yet, say): the write path runs it and answers the error
      return false;
    }
  }
}

function open(path: string): Connection {
  const db = new Database(path, { timeout: 5000 });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA foreign_keys = OFF");
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec("PRAGMA cache_size = -32768");
  return db;
}

/**
 * Read requests on the read connection: one statement, or a batch in one snapshot. Run on the
 * server's reader thread (sim-server-reader.ts), so that reads never wait behind a write batch
 * running on the main thread, as on a libSQL server, which reads on other connections meanwhile.
 */
export function runReads(connections: Connections, stmts: WireStatement[], snapshot: boolean): WireResponse {
  const db = connections.read;
  const started = performance.now();
  try {
    if (snapshot) db.exec("BEGIN");
    const results: WireResult[] = [];
    for (let i = 0; i < stmts.length; i++) {
      try {
        results.push(run(connections, db, stmts[i] as WireStatement));
      } catch (error) {
        return {
          ok: false,
          error: wireError(error, snapshot ? i : undefined),
          serverMs: performance.now() - started,
        };
      }
    }
    if (snapshot) db.exec("COMMIT");
    return { ok: true, results, serverMs: performance.now() - started };
  } catch (error) {
    return { ok: false, error: wireError(error), serverMs: performance.now() - started };
  } finally {
    if (db.inTransaction) db.exec("ROLLBACK");
  }
}

const EMPTY: WireResult = { columns: [], rows: [], rowsAffected: 0, lastInsertRowid: null };

function run(connections: Connections, db: Connection, statement: WireStatement): WireResult {
  // The server decides durability (see the top of this file).
  if (/^\s*PRAGMA\s+synchronous\b/i.test(statement.sql)) return EMPTY;
  const { stmt, reader, columns } = connections.prepare(db, statement.sql);
  const args = bindable(statement.args);
  if (reader) {
    const rows = (args === undefined ? stmt.all() : stmt.all(args)) as unknown[][];
    return { columns, rows: rows.map(encodeRow), rowsAffected: 0, lastInsertRowid: null };
  }
  const info = args === undefined ? stmt.run() : stmt.run(args);
  return { columns: [], rows: [], rowsAffected: info.changes, lastInsertRowid: Number(info.lastInsertRowid) };
}

function bindable(args: Args | undefined): Args | undefined {
  if (args === undefined) return undefined;
  if (Array.isArray(args)) return args.length === 0 ? undefined : args.map(decodeValue);
  const out: Record<string, unknown> = {};
  let any = false;
  for (const name in args) {
    const bare = name[0] === ":" || name[0] === "@" || name[0] === "$" ? name.slice(1) : name;
    out[bare] = decodeValue(args[name]);
    any = true;
  }
  return any ? out : undefined;
}

function decodeValue(value: unknown): unknown {
  if (value !== null && typeof value === "object" && "$blob" in value) {
    return Buffer.from((value as { $blob: string }).$blob, "base64");
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

function encodeRow(row: unknown[]): unknown[] {
  for (let i = 0; i < row.length; i++) {
    const value = row[i];
    if (value instanceof Uint8Array) row[i] = { $blob: Buffer.from(value).toString("base64") };
    else if (typeof value === "bigint") row[i] = Number(value);
  }
  return row;
}

function wireError(error: unknown, index?: number): WireError {
  const e = error as { message?: string; code?: unknown; rawCode?: unknown };
  const extended = typeof e.code === "string" ? e.code : "SQLITE_ERROR";
  const code = extended.split("_").slice(0, 2).join("_");
  return {
    message: e.message ?? String(error),
    code,
    extendedCode: extended,
    ...(typeof e.rawCode === "number" ? { rawCode: e.rawCode } : {}),
    ...(index === undefined ? {} : { index }),
  };
}

/** The write lock's queue: one holder at a time (a batch, an autocommit write or a stream). */
class WriteQueue {
  #holder: string | null = null;
  readonly #waiting: { who: string; go: () => void }[] = [];

  get holder(): string | null {
    return this.#holder;
  }

  async acquire(who: string): Promise<void> {
    if (this.#holder === null) {
      this.#holder = who;
      return;
    }
    await new Promise<void>((go) => this.#waiting.push({ who, go }));
  }

  release(who: string): void {
    if (this.#holder !== who) return;
    const next = this.#waiting.shift();
    this.#holder = next ? next.who : null;
    next?.go();
  }
}

export function startSimServer(path: string, socket: string, synchronous: "FULL" | "NORMAL" = "FULL") {
  const connections = new Connections(path);
  // The reader thread (sim-server-reader.ts): reads beside the writes of this thread.
  const reader = new Worker(new URL("./sim-server-reader.ts", import.meta.url).href, { argv: [path] });
  const readsWaiting = new Map<number, (response: WireResponse) => void>();
  let readId = 0;
  reader.onmessage = (event: MessageEvent<{ id: number; response: WireResponse }>) => {
    readsWaiting.get(event.data.id)?.(event.data.response);
    readsWaiting.delete(event.data.id);
  };
  const read = (stmts: WireStatement[], snapshot: boolean) =>
    new Promise<WireResponse>((resolve) => {
      const id = readId++;
      readsWaiting.set(id, resolve);
      reader.postMessage({ id, stmts, snapshot });
    });
  connections.write.exec("PRAGMA synchronous = NORMAL");
  const wal = synchronous === "FULL" ? new WalSync(`${path}-wal`) : null;
  /** A COMMIT is answered once it is durable; anything else at once (see the top of this file). */
  const durable = (committed: boolean): Promise<void> =>
    wal && committed ? wal.afterCommit() : Promise.resolve();
  const queue = new WriteQueue();
  /** Open streams (interactive transactions): whether begun, and their idle timer. */
  const streams = new Map<string, { timer: ReturnType<typeof setTimeout> | null }>();
  let nextId = 0;

  const endStream = (id: string, how: "commit" | "rollback") => {
    const stream = streams.get(id);
    if (!stream) return;
    if (stream.timer) clearTimeout(stream.timer);
    streams.delete(id);
    try {
      if (connections.write.inTransaction) connections.write.exec(how === "commit" ? "COMMIT" : "ROLLBACK");
    } finally {
      if (connections.write.inTransaction) connections.write.exec("ROLLBACK");
      queue.release(id);
    }
  };

  const handle = async (request: WireRequest, done: { committed: boolean }): Promise<WireResponse> => {
    if (request.op === "execute") {
      if (connections.isRead(request.stmt.sql)) return read([request.stmt], false);
      const who = `execute-${nextId++}`;
      await queue.acquire(who);
      const started = performance.now();
      try {
        const results = [run(connections, connections.write, request.stmt)];
        done.committed = true;
        return { ok: true, results, serverMs: performance.now() - started };
      } catch (error) {
        return { ok: false, error: wireError(error), serverMs: performance.now() - started };
      } finally {
        if (connections.write.inTransaction) connections.write.exec("ROLLBACK");
        queue.release(who);
      }
    }
    if (request.op === "batch" && request.mode === "read") return read(request.stmts, true);
    if (request.op === "batch") {
      const write = request.mode !== "read";
      const who = `batch-${nextId++}`;
      if (write) await queue.acquire(who);
      const db = write ? connections.write : connections.read;
      const started = performance.now();
      try {
        db.exec(write ? "BEGIN IMMEDIATE" : "BEGIN");
        const results: WireResult[] = [];
        for (let i = 0; i < request.stmts.length; i++) {
          try {
            results.push(run(connections, db, request.stmts[i] as WireStatement));
          } catch (error) {
            return { ok: false, error: wireError(error, i), serverMs: performance.now() - started };
          }
        }
        db.exec("COMMIT");
        done.committed = write;
        return { ok: true, results, serverMs: performance.now() - started };
      } catch (error) {
        return { ok: false, error: wireError(error), serverMs: performance.now() - started };
      } finally {
        if (db.inTransaction) db.exec("ROLLBACK");
        if (write) queue.release(who);
      }
    }
    // An interactive transaction's request.
    const id = request.stream;
    let stream = streams.get(id);
    if (!stream) {
      if (!request.stmts || request.stmts.length === 0) {
        // A commit or rollback of a stream that never began (or already ended): nothing to do.
        return { ok: true, results: [], inTransaction: false, serverMs: 0 };
      }
      await queue.acquire(id);
      stream = { timer: null };
      streams.set(id, stream);
      try {
        connections.write.exec("BEGIN IMMEDIATE");
      } catch (error) {
        endStream(id, "rollback");
        return { ok: false, error: wireError(error), inTransaction: false, serverMs: 0 };
      }
    }
    if (stream.timer) clearTimeout(stream.timer);
    stream.timer = setTimeout(() => endStream(id, "rollback"), STREAM_IDLE_MS);
    const started = performance.now();
    const results: WireResult[] = [];
    for (let i = 0; i < (request.stmts?.length ?? 0); i++) {
      try {
        results.push(run(connections, connections.write, request.stmts?.[i] as WireStatement));
      } catch (error) {
        const inTransaction = connections.write.inTransaction;
        if (!inTransaction) endStream(id, "rollback");
        return {
          ok: false,
          error: wireError(error, request.batch ? i : undefined),
          inTransaction,
          serverMs: performance.now() - started,
        };
      }
    }
    if (!request.end && !connections.write.inTransaction) {
      // Its statements ended the transaction (a COMMIT sent with a batch): the stream is over.
      endStream(id, "commit");
      done.committed = true;
      return { ok: true, results, inTransaction: false, serverMs: performance.now() - started };
    }
    if (request.end) {
      try {
        endStream(id, request.end);
        done.committed = request.end === "commit";
      } catch (error) {
        return {
          ok: false,
          error: wireError(error),
          inTransaction: false,
          serverMs: performance.now() - started,
        };
      }
      return { ok: true, results, inTransaction: false, serverMs: performance.now() - started };
    }
    return { ok: true, results, inTransaction: true, serverMs: performance.now() - started };
  };

  try {
    unlinkSync(socket);
  } catch {
    // none yet
  }
  // Requests and answers are lines of JSON, `{ id, request }` and `{ id, response }`, on a Unix
  // socket (network.ts keeps one connection per process); each request runs as it arrives.
  const server = Bun.listen<{ buffered: string; queued: Buffer; decoder: TextDecoder }>({
    unix: socket,
    socket: {
      open(client) {
        client.data = { buffered: "", queued: Buffer.alloc(0), decoder: new TextDecoder() };
      },
      data(client, chunk) {
        const state = client.data;
        state.buffered += state.decoder.decode(chunk, { stream: true });
        let end = state.buffered.indexOf("\n");
        while (end >= 0) {
          const line = state.buffered.slice(0, end);
          state.buffered = state.buffered.slice(end + 1);
          const { id, request } = JSON.parse(line) as { id: number; request: WireRequest };
          const failed = (error: unknown): WireResponse => ({
            ok: false,
            error: wireError(error),
            serverMs: 0,
          });
          const done = { committed: false };
          void handle(request, done)
            .then(undefined, failed)
            .then(async (response) => {
              // A commit's answer leaves once it is durable.
              await durable(done.committed);
              return response;
            })
            .then(undefined, (error: unknown): WireResponse => {
              // The sync failed: the outcome is unknown, as for a lost answer.
              const e = wireError(error);
              return { ok: false, error: { ...e, code: `SIMULATED_SYNC_FAILED ${e.code}` }, serverMs: 0 };
            })
            .then((response) => {
              const out = `${JSON.stringify({ id, response })}\n`;
              if (state.queued.length > 0) {
                state.queued = Buffer.concat([state.queued, Buffer.from(out)]);
                const written = client.write(state.queued);
                state.queued = state.queued.subarray(Math.max(0, written));
                return;
              }
              const written = client.write(out);
              if (written < out.length || Buffer.byteLength(out) > written) {
                state.queued = Buffer.from(out).subarray(Math.max(0, written));
              }
            });
          end = state.buffered.indexOf("\n");
        }
      },
      drain(client) {
        const state = client.data;
        if (state.queued.length === 0) return;
        const written = client.write(state.queued);
        state.queued = state.queued.subarray(Math.max(0, written));
      },
    },
  });
  return {
    stop() {
      void reader.terminate();
      server.stop(true);
      connections.read.close();
      connections.write.close();
    },
  };
}

if (import.meta.main) {
  const [path, socket] = process.argv.slice(2);
  if (!path || !socket)
    throw new Error("usage: bun test/helpers/sim-server.ts <database file> <socket path>");
  const server = startSimServer(path, socket);
  process.on("SIGTERM", () => {
    server.stop();
    process.exit(0);
  });
  console.log("ready");
}
