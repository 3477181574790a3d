import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Driver } from "./driver.ts";
import { makeDatabaseFilesPrivate } from "./private-files.ts";
import { localPath } from "./sqlite.ts";
import { Writer } from "./writer.ts";
import { LocalWrites } from "./writer-local.ts";
import type { Writes } from "./writer-ops.ts";
import { WriterThread, type WriterThreadStart } from "./writer-thread.ts";

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
  /**
   * `engine` (local files only, statements prepared once, on this process's SQLite: sqlite.ts) or
   * `client` (@libsql/client).
   */
  driver: "engine" | "client";
  synchronous: "FULL" | "NORMAL";
  busyTimeoutMs: number;
  /**
   * Where the engine driver's writer runs: on this thread (`main`, the default) or on a thread of
   * its own (`worker`: writer-thread.ts). The client driver always writes on this thread.
   */
  writerThread?: "main" | "worker";
  /** The crash drills' failpoints, enabled on the writer thread too (failpoints.ts). */
  failpoints?: readonly string[];
  /** Tests: more modules that define named writes, for the writer thread to load (writer-thread.ts). */
  writerModules?: readonly string[];
}

/**
 * The engine driver's module, imported when a database is opened: it loads this process's SQLite
 * (sqlite-open.ts; libsql's native module costs ~20 ms at a cold start where it is the one),
 * which on the writer-thread path then loads while that thread starts instead of before it
 * (src/opening.ts: cold start).
 */
const engine = () => import("./engine-driver.ts");

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  const file = localPath(config.databaseUrl);
  if (file) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    makeDatabaseFilesPrivate(file);
  }
  const options = { synchronous: config.synchronous, busyTimeoutMs: config.busyTimeoutMs };
  if (config.writerThread === "worker" && config.driver === "engine" && file) {
    return openOnWriterThread({
      path: file,
      options,
      failpoints: config.failpoints ?? [],
      modules: config.writerModules ?? [],
    });
  }
  const driver =
    config.driver === "engine" && file
      ? (await engine()).openEngineDriver(file, options)
      : // @libsql/client is imported only for the databases that need it (remote, or driver=client).
        await (await import("./client-driver.ts")).openClientDriver(
          { url: config.databaseUrl, authToken: config.databaseAuthToken },
          options,
        );
  const writer = new Writer(driver);
  const writes = new LocalWrites(writer);
  return {
    driver,
    writer,
    write: (request, options) => writes.write(request, options),
    lend: (loan) => writes.lend(loan),
    file,
    async close() {
      await writes.idle();
      await driver.close();
    },
  };
}

/**
 * The engine driver with its writer on a thread of its own (writer-thread.ts): this thread keeps a
 * reader connection. Its Writer refuses operations that are not named writes (they cannot cross).
 */
async function openOnWriterThread(start: WriterThreadStart): Promise<Database> {
  const { path: file, options } = start;
  const [thread, { openEngineReader }] = await Promise.all([
    WriterThread.start(start, (reason) => {
      // Its writes were never answered, so none was acknowledged; a supervisor restarts the process.
      process.stderr.write(`outboxd: the writer thread died (${reason}); exiting\n`);
      process.exit(1);
    }),
    engine(),
  ]);
  const driver: Driver = openEngineReader(file, options);
  return {
    driver,
    writer: new Writer(driver),
    write: (request, options) => thread.write(request, options),
    lend: (loan) => thread.lend(loan),
    file,
    async close() {
      // The reader first: the writer thread's driver closes the -shm descriptor its checkpoint
      // worker read last, which drops the process's locks on that file (checkpointer.ts), so no
      // connection of this process may be open by then.
      await driver.close();
      await thread.close();
    },
  };
}
