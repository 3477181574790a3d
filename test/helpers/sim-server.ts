// A SIMULATED libSQL server for benchmarks (tests and benchmarks only): one process that owns a
// local database file and answers Hrana over HTTP for every outboxd process pointed at it
// (OUTBOXD_DATABASE_URL=http://127.0.0.1:<port>), as a libSQL server (sqld) or Turso would on
// another machine. No libSQL server can be installed on the development and CI hosts; this stands
// in for one, so that outboxd's side is the real one: @libsql/client's own HTTP client, its
// requests, JSON encoding and result decoding (network.ts only adds the round trip's delay and
// counts the requests).
//
// What it serves, as sqld does:
//   - Hrana 2 over HTTP with JSON: `POST /v2/pipeline` with a baton and requests (`execute`,
//     `batch` with conditions on earlier steps, `store_sql`/`close_sql`, `close`,
//     `get_autocommit`). `/v3-protobuf` and `/v3` answer 404, so the client uses version 2 (it
//     would take version 3 with protobuf from a current sqld or Turso: its encoding differs);
//   - a stream (baton) per client stream; a stream that begins a write transaction holds the
//     write lock across its requests until the transaction ends or the stream closes; writers
//     take turns in a queue, without sleeping, as sqld does (no SQLite busy handler involved);
//   - every statement really runs on SQLite (the same PRAGMAs as outboxd's local files), each
//     prepared once per connection and kept, as a server keeps them;
//   - requests that only read (and read-only transactions sent in one request) run on a thread of
//     their own with its own connection (sim-server-reader.ts), beside the writes;
//   - durability is the server's: FULL unless told NORMAL (a client's `PRAGMA synchronous` is
//     answered and ignored), SQLite's own: the WAL is synced inside COMMIT.
// What it does not: the network itself (network.ts delays each request 2 ms in the client; the
// unawaited `close` of an interactive transaction is not delayed), TLS, authentication, Hrana 3
// (cursors, protobuf), `sequence` and `describe`.
// Integer arguments arrive as floats (@libsql/client sends JS numbers so) and are bound as numbers.
//
//   bun test/helpers/sim-server.ts <database file> [FULL|NORMAL]
// prints `ready http://127.0.0.1:<port>` on stdout once it accepts requests; SIGTERM ends it.
// Started as a process of its own, it runs with SIM_SERVER_RUNTIME_ENV (below).
import Database from "libsql";
import { claimSqliteFile } from "../../src/db/sqlite.ts";

type Connection = Database.Database;
type Prepared = Database.Statement<unknown[]>;

/** Hrana's values on the wire (JSON). */
export type HValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

export interface HStmt {
  sql?: string;
  sql_id?: number;
  args?: HValue[];
  named_args?: { name: string; value: HValue }[];
  want_rows?: boolean;
}

export type HCond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: HCond }
  | { type: "and" | "or"; conds: HCond[] }
  | { type: "is_autocommit" };

export type HRequest =
  | { type: "execute"; stmt: HStmt }
  | { type: "batch"; batch: { steps: { condition?: HCond | null; stmt: HStmt }[] } }
  | { type: "store_sql"; sql_id: number; sql: string }
  | { type: "close_sql"; sql_id: number }
  | { type: "get_autocommit" }
  | { type: "close" };

export interface HError {
  message: string;
  code: string;
}

export interface HStmtResult {
  cols: { name: string; decltype: string | null }[];
  rows: HValue[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
}

export type HResult = { type: "ok"; response: Record<string, unknown> } | { type: "error"; error: HError };

/** A stream's statements with their SQL resolved (sql_id replaced by the stored text). */
export type Resolved = Exclude<HRequest, { type: "store_sql" | "close_sql" | "close" }>;

/**
 * The environment the simulated server's own process runs with (bench/scenarios/remote.ts). A
 * libSQL server is a Rust program: it has no JIT compiler and no JavaScript heap to tidy. Bun's
 * housekeeping threads are an artifact of simulating one in Bun, and with the defaults they were
 * ~40% of its CPU per commit, on the cores the serves share (mi-scavenger, JITWorker, JSCWarmUp:
 * 563-609 µs of CPU per commit in all, 269-325 µs without, alternated, load 8-12). So: mimalloc
 * keeps the memory it freed (MIMALLOC_PURGE_DELAY=-1: no purging thread), and JavaScriptCore's
 * last tier, whose compiles ran all along, is off (BUN_JSC_useFTLJIT=0). Every statement still
 * runs on SQLite as before.
 */
export const SIM_SERVER_RUNTIME_ENV: Record<string, string> = {
  MIMALLOC_PURGE_DELAY: "-1",
  BUN_JSC_useFTLJIT: "0",
};

/** A stream that holds the write lock and hears nothing for this long is rolled back (sqld: baton expiry). */
const STREAM_IDLE_MS = 10_000;

export class Connections {
  /** Statements prepared once and kept, by SQL text. */
  readonly #prepared = new Map<string, { stmt: Prepared; reader: boolean; cols: HStmtResult["cols"] }>();
  readonly db: Connection;
  /** Statements run that may write (not readers): tells a request that wrote from one that did not. */
  writes = 0;

  /** Forgets this thread's claim on the file (src/db/sqlite.ts) once closed. */
  readonly release: () => void;

  constructor(path: string) {
    // A stand-in for a libSQL server (another process, running libsql's SQLite): the file is
    // claimed as libsql's, so no connection of this test process may open it through another copy.
    this.release = claimSqliteFile(path, "libsql");
    this.db = new Database(path, { timeout: 5000 });
    for (const pragma of [
      "PRAGMA journal_mode = WAL",
      "PRAGMA foreign_keys = OFF",
      "PRAGMA temp_store = MEMORY",
      "PRAGMA cache_size = -32768",
      "PRAGMA wal_autocheckpoint = 10000",
    ])
      this.db.exec(pragma);
  }

  prepare(sql: string): { stmt: Prepared; reader: boolean; cols: HStmtResult["cols"] } {
    let entry = this.#prepared.get(sql);
    if (!entry) {
      const stmt = this.db.prepare(sql);
      const reader = stmt.reader;
      if (reader) {
        stmt.raw(true);
        // Integers as bigint: answered as Hrana integers, reals as floats.
        stmt.safeIntegers(true);
      }
      const cols = reader ? stmt.columns().map((c) => ({ name: c.name, decltype: c.type ?? null })) : [];
      entry = { stmt, reader, cols };
      // PRAGMAs change settings: prepare them anew each time.
      if (!/^\s*PRAGMA\b/i.test(sql)) this.#prepared.set(sql, entry);
    }
    return entry;
  }

  /** Whether a statement only reads or only delimits a read transaction (the reader may run it). */
  readsOnly(sql: string): boolean {
    if (/^\s*(BEGIN\s+(TRANSACTION\s+)?(READONLY|DEFERRED)|BEGIN|COMMIT|END|ROLLBACK)\s*;?\s*$/i.test(sql))
      return true;
    if (!/^\s*SELECT\b/i.test(sql)) return false;
    try {
      return this.prepare(sql).reader;
    } catch {
      // (no such table yet, say): the write path runs it and answers the error
      return false;
    }
  }
}

/** Runs one stream request's worth of requests on a connection (the main thread's or the reader's). */
export function runRequests(connections: Connections, requests: Resolved[]): HResult[] {
  return requests.map((request) => {
    if (request.type === "get_autocommit")
      return {
        type: "ok",
        response: { type: "get_autocommit", is_autocommit: !connections.db.inTransaction },
      };
    if (request.type === "execute") {
      try {
        return { type: "ok", response: { type: "execute", result: runStmt(connections, request.stmt) } };
      } catch (error) {
        return { type: "error", error: hranaError(error) };
      }
    }
    const results: (HStmtResult | null)[] = [];
    const errors: (HError | null)[] = [];
    for (const step of request.batch.steps) {
      if (step.condition && !holds(step.condition, results, errors, connections.db)) {
        results.push(null);
        errors.push(null);
        continue;
      }
      try {
        results.push(runStmt(connections, step.stmt));
        errors.push(null);
      } catch (error) {
        results.push(null);
        errors.push(hranaError(error));
      }
    }
    return {
      type: "ok",
      response: { type: "batch", result: { step_results: results, step_errors: errors } },
    };
  });
}

function holds(cond: HCond, results: unknown[], errors: unknown[], db: Connection): boolean {
  switch (cond.type) {
    case "ok":
      return results[cond.step] != null;
    case "error":
      return errors[cond.step] != null;
    case "not":
      return !holds(cond.cond, results, errors, db);
    case "and":
      return cond.conds.every((c) => holds(c, results, errors, db));
    case "or":
      return cond.conds.some((c) => holds(c, results, errors, db));
    case "is_autocommit":
      return !db.inTransaction;
  }
}

const EMPTY: HStmtResult = { cols: [], rows: [], affected_row_count: 0, last_insert_rowid: null };

function runStmt(connections: Connections, statement: HStmt): HStmtResult {
  const sql = statement.sql as string;
  // The server decides durability (see the top of this file).
  if (/^\s*PRAGMA\s+synchronous\b/i.test(sql)) return EMPTY;
  const { stmt, reader, cols } = connections.prepare(sql);
  const args = bindable(statement);
  if (reader) {
    const rows = (args === undefined ? stmt.all() : stmt.all(args)) as unknown[][];
    return {
      cols,
      rows: statement.want_rows === false ? [] : rows.map((row) => row.map(encodeValue)),
      affected_row_count: 0,
      last_insert_rowid: null,
    };
  }
  connections.writes += 1;
  const info = args === undefined ? stmt.run() : stmt.run(args);
  return {
    cols: [],
    rows: [],
    affected_row_count: info.changes,
    last_insert_rowid: String(info.lastInsertRowid),
  };
}

function bindable(statement: HStmt): unknown[] | Record<string, unknown> | undefined {
  if (statement.named_args && statement.named_args.length > 0) {
    const out: Record<string, unknown> = {};
    for (const { name, value } of statement.named_args) {
      const bare = name[0] === ":" || name[0] === "@" || name[0] === "$" ? name.slice(1) : name;
      out[bare] = decodeValue(value);
    }
    return out;
  }
  if (statement.args && statement.args.length > 0) return statement.args.map(decodeValue);
  return undefined;
}

function decodeValue(value: HValue): unknown {
  switch (value.type) {
    case "null":
      return null;
    case "integer": {
      const big = BigInt(value.value);
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(big)
        : big;
    }
    case "float":
    case "text":
      return value.value;
    case "blob":
      return Buffer.from(value.base64, "base64");
  }
}

function encodeValue(value: unknown): HValue {
  if (value === null || value === undefined) return { type: "null" };
  if (typeof value === "bigint") return { type: "integer", value: String(value) };
  if (typeof value === "number") return { type: "float", value };
  if (typeof value === "string") return { type: "text", value };
  return { type: "blob", base64: Buffer.from(value as Uint8Array).toString("base64") };
}

function hranaError(error: unknown): HError {
  const e = error as { message?: string; code?: unknown };
  const extended = typeof e.code === "string" ? e.code : "SQLITE_ERROR";
  // sqld answers SQLite's primary code (SQLITE_CONSTRAINT for a failed CHECK, say).
  return { message: e.message ?? String(error), code: extended.split("_").slice(0, 2).join("_") };
}

/** The write lock's queue: one holder at a time (a stream), in turn. */
class WriteQueue {
  #holder: string | null = null;
  readonly #waiting: { who: string; go: () => void }[] = [];
  /** Since when the holder holds it (performance.now()). */
  #since = 0;
  /**
   * Turns taken so far, the time the lock was held in all and the time this thread ran statements
   * under it (ms): GET /stats (the benchmark's). Held but not working: the holder's round trips
   * and its own work between its requests.
   */
  readonly stats = { turns: 0, heldMs: 0, workMs: 0 };

  get holder(): string | null {
    return this.#holder;
  }

  /** Streams waiting for the lock now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  async acquire(who: string): Promise<void> {
    if (this.#holder === who) return;
    if (this.#holder === null) {
      this.#take(who);
      return;
    }
    await new Promise<void>((go) => this.#waiting.push({ who, go }));
  }

  release(who: string): void {
    if (this.#holder !== who) return;
    this.stats.heldMs += performance.now() - this.#since;
    const next = this.#waiting.shift();
    this.#holder = null;
    if (next) this.#take(next.who);
    next?.go();
  }

  #take(who: string): void {
    this.#holder = who;
    this.#since = performance.now();
    this.stats.turns += 1;
  }
}

interface Stream {
  sqls: Map<number, string>;
  /** Closes it once it has been idle too long (STREAM_IDLE_MS), from when its last request was answered. */
  timer: ReturnType<typeof setTimeout> | null;
  /** Its requests not answered yet: while one runs or waits for the write lock, the stream is not idle. */
  busy: number;
  /** The stream's requests run one after another, in the order they came. */
  tail: Promise<unknown>;
  /** Whether its write transaction (or autocommit statement) ran statements that may write. */
  wrote: boolean;
}

export function startSimServer(
  path: string,
  synchronous: "FULL" | "NORMAL" = "FULL",
  /** How long a stream may go unheard before it is closed (a test of a Machine that died holding the lock). */
  streamIdleMs = STREAM_IDLE_MS,
) {
  const writer = new Connections(path);
  writer.db.exec(`PRAGMA synchronous = ${synchronous}`);
  // The reader thread (sim-server-reader.ts): reads beside the writes of this thread.
  const reader = new Worker(new URL("./sim-server-reader.ts", import.meta.url).href, { argv: [path] });
  const readsWaiting = new Map<number, (results: string[]) => void>();
  let readId = 0;
  reader.onmessage = (event: MessageEvent<{ id: number; results: string[] }>) => {
    readsWaiting.get(event.data.id)?.(event.data.results);
    readsWaiting.delete(event.data.id);
  };
  // Requests and results cross to the reader thread as JSON text: cheaper for this thread than
  // cloning them (postMessage was 13% of its samples).
  const read = (sqls: Map<number, string>, requests: HRequest[]) =>
    new Promise<string[]>((resolve) => {
      const id = readId++;
      readsWaiting.set(id, resolve);
      reader.postMessage({ id, json: JSON.stringify({ sqls: [...sqls], requests }) });
    });
  const queue = new WriteQueue();
  const streams = new Map<string, Stream>();
  let nextStream = 0;

  /** Ends a stream: a transaction it left open is rolled back and the write lock released. */
  const close = (baton: string) => {
    const stream = streams.get(baton);
    if (!stream) return;
    if (stream.timer) clearTimeout(stream.timer);
    streams.delete(baton);
    if (queue.holder === baton) {
      if (writer.db.inTransaction) writer.db.exec("ROLLBACK");
      queue.release(baton);
    }
  };

  /**
   * One pipeline request of a stream: its requests in order, on the reader or under the write
   * lock. Answers each request's result as JSON text.
   */
  const pipeline = async (baton: string, stream: Stream, requests: HRequest[]): Promise<string[]> => {
    const results: string[] = new Array(requests.length);
    const work: { at: number; request: Exclude<HRequest, { type: "store_sql" | "close_sql" | "close" }> }[] =
      [];
    let closing = false;
    requests.forEach((request, at) => {
      if (request.type === "store_sql") {
        stream.sqls.set(request.sql_id, request.sql);
        results[at] = '{"type":"ok","response":{"type":"store_sql"}}';
      } else if (request.type === "close_sql") {
        stream.sqls.delete(request.sql_id);
        results[at] = '{"type":"ok","response":{"type":"close_sql"}}';
      } else if (request.type === "close") {
        closing = true;
        results[at] = '{"type":"ok","response":{"type":"close"}}';
      } else work.push({ at, request });
    });
    if (work.length > 0) {
      const statements = work.flatMap(({ request }) =>
        request.type === "execute"
          ? [request.stmt]
          : request.type === "batch"
            ? request.batch.steps.map((s) => s.stmt)
            : [],
      );
      const text = (s: HStmt) =>
        s.sql ?? (s.sql_id === undefined ? undefined : stream.sqls.get(s.sql_id)) ?? "";
      let answered: string[];
      if (queue.holder !== baton && statements.every((s) => writer.readsOnly(text(s)))) {
        answered = await read(
          stream.sqls,
          work.map((w) => w.request),
        );
      } else {
        await queue.acquire(baton);
        if (streams.get(baton) !== stream) {
          // Closed while it waited: the lock goes on to the next, nothing of this stream runs.
          queue.release(baton);
          throw new Error("the stream was closed");
        }
        const before = writer.writes;
        const started = performance.now();
        answered = runRequests(
          writer,
          work.map((w) => resolve(stream.sqls, w.request)),
        ).map((result) => JSON.stringify(result));
        queue.stats.workMs += performance.now() - started;
        if (writer.writes !== before) stream.wrote = true;
        if (!writer.db.inTransaction) {
          queue.release(baton);
          stream.wrote = false;
        }
      }
      work.forEach(({ at }, i) => {
        results[at] = answered[i] as string;
      });
    }
    if (closing) close(baton);
    return results;
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method === "GET") {
        // The write lock's turns and time held so far (bench/scenarios/remote.ts: lock-bound or
        // not), and the streams waiting for it now (test/remote/lock-waiters.test.ts).
        if (url.pathname === "/stats") return Response.json({ ...queue.stats, waiting: queue.waiting });
        return url.pathname === "/v2" || url.pathname === "/" || url.pathname === "/health"
          ? new Response("")
          : new Response("not found", { status: 404 });
      }
      if (request.method !== "POST" || url.pathname !== "/v2/pipeline")
        return new Response("not found", { status: 404 });
      const body = (await request.json()) as { baton?: string | null; requests: HRequest[] };
      let baton = body.baton ?? null;
      let stream: Stream | undefined;
      if (baton === null) {
        baton = `s${nextStream++}`;
        stream = { sqls: new Map(), timer: null, busy: 0, tail: Promise.resolve(), wrote: false };
        streams.set(baton, stream);
      } else {
        stream = streams.get(baton);
        if (!stream)
          return Response.json({ message: "the stream has expired or is unknown" }, { status: 400 });
      }
      // Idle from when its last request is answered, not from when one came: a request that
      // waited for the write lock longer than that (behind a Machine that died holding it) used
      // to have its stream closed while it waited, and then took the lock for a stream nobody
      // could close any more: every writer after it waited forever (the two-machine killer test
      // of test/remote, once in a while under load).
      if (stream.timer) clearTimeout(stream.timer);
      stream.timer = null;
      stream.busy += 1;
      const id = baton;
      const own = stream;
      const running = own.tail.then(() => pipeline(id, own, body.requests));
      own.tail = running.catch(() => undefined);
      let results: string[];
      try {
        results = await running;
      } catch (error) {
        close(id);
        return Response.json({ message: String((error as Error)?.message ?? error) }, { status: 500 });
      } finally {
        own.busy -= 1;
        if (own.busy === 0 && streams.get(id) === own) own.timer = setTimeout(() => close(id), streamIdleMs);
      }
      const next = streams.has(id) ? JSON.stringify(id) : "null";
      return new Response(`{"baton":${next},"base_url":null,"results":[${results.join(",")}]}`, {
        headers: { "content-type": "application/json" },
      });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    stop() {
      void reader.terminate();
      server.stop(true);
      writer.db.close();
      writer.release();
    },
  };
}

/** The request with its SQL text in place of a stored SQL's id (store_sql). */
export function resolve(
  sqls: Map<number, string>,
  request: Exclude<HRequest, { type: "store_sql" | "close_sql" | "close" }>,
): Resolved {
  const stmt = (s: HStmt): HStmt => {
    if (s.sql !== undefined) return s;
    const sql = s.sql_id === undefined ? undefined : sqls.get(s.sql_id);
    if (sql === undefined) throw new Error(`SQL text ${s.sql_id} is not stored`);
    return { ...s, sql };
  };
  if (request.type === "execute") return { type: "execute", stmt: stmt(request.stmt) };
  if (request.type === "batch")
    return {
      type: "batch",
      batch: { steps: request.batch.steps.map((s) => ({ ...s, stmt: stmt(s.stmt) })) },
    };
  return request;
}

if (import.meta.main) {
  const [path, mode] = process.argv.slice(2);
  if (!path) throw new Error("usage: bun test/helpers/sim-server.ts <database file> [FULL|NORMAL]");
  const server = startSimServer(path, mode === "NORMAL" ? "NORMAL" : "FULL");
  process.on("SIGTERM", () => {
    server.stop();
    process.exit(0);
  });
  console.log(`ready ${server.url}`);
}
