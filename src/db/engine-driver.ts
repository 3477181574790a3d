// Local database files through the `libsql` engine package (the engine @libsql/client itself
// runs on for `file:` URLs) with every statement prepared once. Calls are synchronous; the
// writer connection is used only by the Writer's one-at-a-time transactions. Their fsync is
// not: with synchronous FULL the WAL is synced off the event loop (wal-sync.ts), and a
// transaction's promise resolves once its COMMIT is durable while the next one may already run.
import Database from "libsql";
import { type Driver, type DriverOptions, localPragmas, type TransactionOptions } from "./driver.ts";
import { type Execute, type Op, runOpSync, type Statement } from "./op.ts";
import { WalSync } from "./wal-sync.ts";

type Connection = Database.Database;
type Prepared = Database.Statement<unknown[]>;

export function openEngineDriver(path: string, options: DriverOptions): Driver {
  const writer = openConnection(path, options);
  const reader = openConnection(path, options);
  const executeOnWriter = executor(writer);
  const executeOnReader = executor(reader);
  // FULL: the WAL is synced here, after COMMIT, instead of inside it (wal-sync.ts).
  const wal = options.synchronous === "FULL" ? new WalSync(`${path}-wal`) : null;
  if (wal) writer.exec("PRAGMA synchronous = NORMAL");

  return {
    name: "engine",
    pipelined: true,
    walSyncs: () => wal?.syncs ?? 0,
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
    async executeAlone(sql, args = {}) {
      reader.prepare(sql).run(args);
    },
    async close() {
      await wal?.close();
      writer.close();
      reader.close();
    },
  };
}

function openConnection(path: string, options: DriverOptions): Connection {
  const db = new Database(path, { timeout: options.busyTimeoutMs });
  for (const pragma of localPragmas(options)) db.exec(pragma);
  return db;
}

function executor(db: Connection): Execute {
  const prepared = new Map<string, Prepared>();
  return (statement: Statement) => {
    let stmt = prepared.get(statement.sql);
    if (!stmt) {
      stmt = db.prepare(statement.sql);
      prepared.set(statement.sql, stmt);
    }
    switch (statement.kind) {
      case "all":
        return stmt.all(statement.args);
      case "get": {
        // libsql's get() (unlike all()) adds a `_metadata` timing key to the row; drop it so both
        // drivers hand operations the same rows (a row spread into a response would leak it).
        const row = stmt.get(statement.args) as Record<string, unknown> | undefined;
        if (row) delete row._metadata;
        return row;
      }
      case "run":
        return stmt.run(statement.args).changes;
    }
  };
}
