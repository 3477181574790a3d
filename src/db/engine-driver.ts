// Local database files through this process's copy of SQLite (sqlite.ts: bun:sqlite under Bun,
// the `libsql` engine package elsewhere) with every statement prepared once. Calls are synchronous;
// the writer connection is used only by the Writer's one-at-a-time transactions. Durability is
// SQLite's own (DESIGN §1.8): with synchronous FULL, COMMIT syncs the WAL before it publishes the
// commit to any connection, so no process on the file can see (claim, send, stream) a commit that
// a power loss could undo, and a transaction returns only once its commit is durable.
import { BACKSTOP_FRAMES, CHECKPOINT_FRAMES, Checkpointer } from "./checkpointer.ts";
import { type Driver, type DriverOptions, localPragmas, type TransactionOptions } from "./driver.ts";
import { type Execute, type Op, runOpSync, type Statement } from "./op.ts";
import { parameterOrder } from "./parameters.ts";
import type { SqliteConnection, SqliteStatement } from "./sqlite.ts";
import { openSqlite } from "./sqlite-open.ts";
import { stopOnFatal } from "./storage-errors.ts";

/** The engine driver, and how its checkpoints go (for tests). */
export interface EngineDriver extends Driver {
  /** The checkpoints a worker ran off the event loop, and whether it is running them now. */
  backgroundCheckpoints(): { working: boolean; checkpoints: number };
}

export function openEngineDriver(path: string, options: DriverOptions): EngineDriver {
  const writer = openConnection(path, options);
  // Opened at the first read: a command that only writes holds no reader connection.
  let reads: Reader | null = null;
  const reader = () => {
    reads ??= openReader(path, options);
    return reads;
  };
  const execute = executor(writer);
  // A statement that fails may have ended the whole transaction: SQLite rolls it back itself after
  // some errors (SQLITE_FULL among them: sqlite.org/lang_transaction.html). Every statement after
  // it in this transaction then fails too, so no operation of the batch commits on its own.
  let lost: unknown = null;
  const executeOnWriter: Execute = (statement) => {
    if (lost !== null) throw lost;
    try {
      return execute(statement);
    } catch (error) {
      if (!writer.inTransaction) lost = error;
      throw error;
    }
  };
  // Transactions that only change leases or attempt outcomes may skip their sync (DESIGN §1.8):
  // NORMAL for them alone, FULL again after. The next durable commit's sync covers their frames
  // too (a sync is per file), and one lost to a power failure only repeats a delivery.
  const relaxed = options.synchronous === "FULL";
  let closed = false;
  // The WAL's checkpoints on a worker thread, the writer's own only as a backstop (checkpointer.ts).
  const checkpointer = new Checkpointer(
    { path, busyTimeoutMs: options.busyTimeoutMs, synchronous: options.synchronous },
    {
      ready: () => {
        if (!closed) writer.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_FRAMES}`);
      },
      gone: (error, code) => {
        // Its connection met a fatal storage error: the process stops as the writer's would.
        if (code !== undefined) stopOnFatal(path, Object.assign(new Error(error), { code }));
        if (!closed) writer.exec(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_FRAMES}`);
      },
    },
  );

  return {
    name: "engine",
    backgroundCheckpoints: () => ({ working: checkpointer.working, checkpoints: checkpointer.checkpoints }),
    read: (op) => reader().read(op),
    async transaction<T>(op: Op<T>, { durable = true }: TransactionOptions = {}): Promise<T> {
      // Synchronous from BEGIN to COMMIT (and its sync): a whole group commit runs in one turn of
      // the event loop.
      const skipSync = relaxed && !durable;
      if (skipSync) writer.exec("PRAGMA synchronous = NORMAL");
      try {
        writer.exec("BEGIN IMMEDIATE");
        lost = null;
        try {
          const value = runOpSync(op, executeOnWriter);
          if (lost !== null) throw lost;
          writer.exec("COMMIT");
          return value;
        } catch (error) {
          if (writer.inTransaction) writer.exec("ROLLBACK");
          throw error;
        }
      } finally {
        if (skipSync) writer.exec("PRAGMA synchronous = FULL");
      }
    },
    executeAlone: (sql, args) => reader().executeAlone(sql, args),
    async close() {
      closed = true;
      await checkpointer.stop();
      writer.close();
      await reads?.close();
      // Last: closing it drops the process's locks on the -shm (checkpointer.ts), so no connection
      // of this driver may be open then.
      checkpointer.release();
    },
  };
}

type Reader = Pick<Driver, "read" | "executeAlone" | "close">;

/**
 * The engine driver's reads alone, on a connection of their own: the main thread's half while the
 * writer runs on its thread (writer-thread.ts). Its transaction refuses: one writer connection
 * per process, and it is the writer thread's.
 */
export function openEngineReader(path: string, options: DriverOptions): Driver {
  return {
    name: "engine",
    ...openReader(path, options),
    async transaction() {
      throw new Error("this process writes on its writer thread: queue a named write (db.write)");
    },
  };
}

/** The engine driver's reads, on a connection of their own beside the writer's. */
function openReader(path: string, options: DriverOptions): Reader {
  const reader = openConnection(path, options);
  const executeOnReader = executor(reader);
  return {
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
    async executeAlone(sql, args = {}) {
      reader.prepare(sql).run(args);
    },
    async close() {
      reader.close();
    },
  };
}

function openConnection(path: string, options: DriverOptions): SqliteConnection {
  const db = openSqlite(path, { busyTimeoutMs: options.busyTimeoutMs });
  for (const pragma of localPragmas(options)) db.exec(pragma);
  return db;
}

interface PreparedStatement {
  stmt: SqliteStatement;
  /** The statement's parameter names in SQLite's order, when they can be bound by position. */
  names: string[] | null;
}

/**
 * The arguments as SQLite binds them fastest: by position (libsql looks every named parameter up
 * on the object; an array of 10 values binds in ~75% of the time), the same values either way. A
 * missing argument keeps the named form: bun:sqlite refuses it (libsql binds NULL).
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

function executor(db: SqliteConnection): Execute {
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
    if (statement.kind === "run") return stmt.run(args);
    // A statement without result columns still runs (a `get` of a write answers nothing).
    return statement.kind === "all" ? stmt.all(args) : stmt.get(args);
  };
}
