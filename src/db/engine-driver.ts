// Local database files through the `libsql` engine package (the engine @libsql/client itself
// runs on for `file:` URLs) with every statement prepared once. Calls are synchronous; the
// writer connection is used only by the Writer's one-at-a-time transactions. Their fsync is
// not: with synchronous FULL the WAL is synced off the event loop (wal-sync.ts), and a
// transaction's promise resolves once its COMMIT is durable while the next one may already run.
import Database from "libsql";
import { BACKSTOP_FRAMES, CHECKPOINT_FRAMES, Checkpointer } from "./checkpointer.ts";
import { type Driver, type DriverOptions, localPragmas, type TransactionOptions } from "./driver.ts";
import { type Execute, type Op, runOpSync, type Statement } from "./op.ts";
import { WalSync } from "./wal-sync.ts";

type Connection = Database.Database;
type Prepared = Database.Statement<unknown[]>;

/** The engine driver, and how its checkpoints and WAL syncs go (for tests). */
export interface EngineDriver extends Driver {
  /** WAL syncs finished (walSyncs: begun). */
  walSyncsFinished(): number;
  /** The checkpoints a worker ran off the event loop, and whether it is running them now. */
  backgroundCheckpoints(): { working: boolean; checkpoints: number };
}

export function openEngineDriver(path: string, options: DriverOptions): EngineDriver {
  const writer = openConnection(path, options);
  // Opened at the first read: the writer thread (writer-thread.ts) never reads through its driver,
  // so it holds no reader connection (nor its page cache) beside the main thread's.
  let reads: Driver | null = null;
  const reader = () => {
    reads ??= openEngineReader(path, options);
    return reads;
  };
  const executeOnWriter = executor(writer);
  // FULL: the WAL is synced here, after COMMIT, instead of inside it (wal-sync.ts).
  const wal = options.synchronous === "FULL" ? new WalSync(`${path}-wal`) : null;
  if (wal) writer.exec("PRAGMA synchronous = NORMAL");
  let closed = false;
  // The WAL's checkpoints on a worker thread, the writer's own only as a backstop (checkpointer.ts).
  const checkpointer = new Checkpointer(
    { path, busyTimeoutMs: options.busyTimeoutMs, synchronous: options.synchronous },
    {
      ready: () => {
        if (!closed) writer.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_FRAMES}`);
      },
      gone: () => {
        if (!closed) writer.exec(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_FRAMES}`);
      },
    },
  );

  return {
    name: "engine",
    backgroundCheckpoints: () => ({ working: checkpointer.working, checkpoints: checkpointer.checkpoints }),
    pipelined: true,
    walSyncs: () => wal?.syncs ?? 0,
    walSyncsFinished: () => wal?.synced ?? 0,
    read: (op) => reader().read(op),
    async transaction<T>(op: Op<T>, { durable = true }: TransactionOptions = {}): Promise<T> {
      // Synchronous from BEGIN to COMMIT: a whole group commit runs in one turn of the event loop,
      // before this function first awaits (the Writer relies on it: `pipelined`).
      writer.exec("BEGIN IMMEDIATE");
      let value: T;
      try {
        value = runOpSync(op, executeOnWriter);
        writer.exec("COMMIT");
      } catch (error) {
        if (writer.inTransaction) writer.exec("ROLLBACK");
        throw error;
      }
      // A transaction that needs no fsync of its own still waits for those before it: what it
      // read (a claim of a delivery committed just before) must not be acted upon until it is
      // durable.
      if (wal) await (durable ? wal.afterCommit() : wal.settled());
      return value;
    },
    executeAlone: (sql, args) => reader().executeAlone(sql, args),
    async close() {
      closed = true;
      await checkpointer.stop();
      await wal?.close();
      writer.close();
      await reads?.close();
    },
  };
}

/**
 * The engine driver's reads alone, on a connection of their own: the main thread's half when the
 * writer runs on a thread of its own (writer-thread.ts). Its transaction refuses: one writer
 * connection per process, and it is the writer thread's.
 */
export function openEngineReader(path: string, options: DriverOptions): Driver {
  const reader = openConnection(path, options);
  const executeOnReader = executor(reader);
  return {
    name: "engine",
    async read<T>(op: Op<T>): Promise<T> {
      // A read transaction gives every statement of the operation the same snapshot; it runs
      // synchronously, so no other read can reach this connection before it ends.
      reader.exec("BEGIN");
      try {
        return runOpSync(op, executeOnReader);
      } finally {
        reader.exec("COMMIT");
      }
    },
    async transaction() {
      throw new Error(
        "this process writes on its writer thread (OUTBOXD_WRITER_THREAD=worker): queue a named write (db.write)",
      );
    },
    async executeAlone(sql, args = {}) {
      reader.prepare(sql).run(args);
    },
    async close() {
      reader.close();
    },
  };
}

function openConnection(path: string, options: DriverOptions): Connection {
  const db = new Database(path, { timeout: options.busyTimeoutMs });
  for (const pragma of localPragmas(options)) db.exec(pragma);
  return db;
}

interface PreparedStatement {
  stmt: Prepared;
  /** The statement's parameter names in SQLite's order, when they can be bound by position. */
  names: string[] | null;
  /**
   * The names of its result columns once it has been asked for rows (then it answers arrays:
   * `rowOf`), null for a statement without a result; undefined until then.
   */
  columns?: string[] | null;
}

/**
 * The names of a statement's `:name` parameters in the order SQLite numbers them (first
 * appearance), or null when the text has anything that could make that reading wrong: quotes or
 * comments (a `:` inside them), other parameter forms (`?`, `@`, `$`).
 */
export function parameterOrder(sql: string): string[] | null {
  if (/['"`?@$]|--|\/\*/.test(sql)) return null;
  const names: string[] = [];
  for (const match of sql.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const name = match[1] as string;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * The arguments as libsql binds them fastest: by position (libsql looks every named parameter up
 * on the object; an array of 10 values binds in ~75% of the time), the same values either way. A
 * missing argument keeps the named form, so libsql still refuses it.
 */
function bindable(prepared: PreparedStatement, args: Statement["args"]): unknown[] | Statement["args"] {
  const { names } = prepared;
  if (names === null) return args;
  const values = new Array<unknown>(names.length);
  for (let i = 0; i < names.length; i++) {
    const value = args[names[i] as string];
    if (value === undefined) return args;
    values[i] = value;
  }
  return values;
}

function executor(db: Connection): Execute {
  const cache = new Map<string, PreparedStatement>();
  return (statement: Statement) => {
    let prepared = cache.get(statement.sql);
    if (!prepared) {
      prepared = { stmt: db.prepare(statement.sql), names: parameterOrder(statement.sql) };
      cache.set(statement.sql, prepared);
    }
    const { stmt } = prepared;
    // Positional values when the statement has them (op.ts Statement.values): its args are then
    // made only on demand.
    const args = statement.values ?? bindable(prepared, statement.args);
    if (statement.kind === "run") return stmt.run(args).changes;
    const columns = prepared.columns === undefined ? rowsAsArrays(prepared) : prepared.columns;
    // A statement without result columns still runs (a `get` of a write answers nothing).
    if (columns === null) return statement.kind === "all" ? stmt.all(args) : void stmt.get(args);
    if (statement.kind === "all")
      return (stmt.all(args) as unknown[][]).map((values) => rowOf(columns, values));
    const values = stmt.get(args) as unknown[] | undefined;
    return values === undefined ? undefined : rowOf(columns, values);
  };
}

/**
 * Switches a statement that returns rows to arrays of values (libsql's raw mode) and keeps its
 * column names: rows made here from those cost about a microsecond less per read than libsql's
 * own objects, whose get() also adds a `_metadata` timing key no operation wants.
 */
function rowsAsArrays(prepared: PreparedStatement): string[] | null {
  const { stmt } = prepared;
  prepared.columns = stmt.reader
    ? stmt
        .raw(true)
        .columns()
        .map((column) => column.name)
    : null;
  return prepared.columns;
}

/** A row as libsql's object mode makes it: a key per column, in order (a repeated name: the last wins). */
function rowOf(columns: string[], values: unknown[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i];
  return row;
}
