import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Driver } from "./driver.ts";
import { makeDatabaseFilesPrivate } from "./private-files.ts";
import { localPath } from "./sqlite.ts";
import { Writer } from "./writer.ts";
import { operationOf, type Writes } from "./writer-ops.ts";

export interface Database {
  driver: Driver;
  /**
   * The Writer of this thread, for operations that are not named writes (tests, the storage
   * suite). outboxd itself writes only through `write` (named writes: db/writer-ops.ts).
   */
  writer: Writer;
  /** Queues a named write (db/writer-ops.ts) where the writer runs; settles once it is committed. */
  write: Writes["write"];
  /** Lends named writes something of this thread's memory (db/writer-ops.ts WriteLoan). */
  lend: Writes["lend"];
  /** Absolute path of the database file, or null for a remote database. */
  file: string | null;
  close(): Promise<void>;
}

/** What opening the database needs; src/config.ts reads and validates it (Config extends this). */
export interface DatabaseConfig {
  databaseUrl: string;
  databaseAuthToken: string | undefined;
  synchronous: "FULL" | "NORMAL";
  busyTimeoutMs: number;
}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  const file = localPath(config.databaseUrl);
  if (file) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    makeDatabaseFilesPrivate(file);
  }
  const options = { synchronous: config.synchronous, busyTimeoutMs: config.busyTimeoutMs };
  // A local file: the engine driver, on this runtime's SQLite (sqlite.ts). A libSQL server:
  // @libsql/client, imported only then.
  const driver = file
    ? (await import("./engine-driver.ts")).openEngineDriver(file, options)
    : await (await import("./client-driver.ts")).openClientDriver(
        { url: config.databaseUrl, authToken: config.databaseAuthToken },
        options,
      );
  const writer = new Writer(driver);
  // What the writes that borrow it use (writer-ops.ts): the dispatcher's head leases, once lent.
  let loan: unknown;
  return {
    driver,
    writer,
    write: (request, options) => writer.write(operationOf(request, loan), options),
    lend: (lent) => {
      loan = lent;
    },
    file,
    async close() {
      await writer.idle();
      await driver.close();
    },
  };
}
