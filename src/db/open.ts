import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Driver } from "./driver.ts";
import { makeDatabaseFilesPrivate } from "./private-files.ts";
import { localPath } from "./sqlite.ts";
import { stopOnFatal } from "./storage-errors.ts";
import { Writer } from "./writer.ts";
import { decodeError } from "./writer-errors.ts";
import { operationOf, type Writes } from "./writer-ops.ts";
import { WriterThread } from "./writer-thread.ts";

export interface Database {
  driver: Driver;
  /**
   * The Writer of this thread, for operations that are not named writes (commands, tests). With
   * the writer on its own thread its driver only reads: outboxd itself writes only through
   * `write` (named writes: db/writer-ops.ts).
   */
  writer: Writer;
  /** Queues a named write (db/writer-ops.ts) where the writer runs; settles once it is committed. */
  write: Writes["write"];
  /** Lends named writes something of this thread's memory (db/writer-ops.ts WriteLoan). */
  lend: Writes["lend"];
  /** Whether the last write failed with SQLITE_FULL (storage-errors.ts): /readyz fails meanwhile. */
  readonly storageFull: boolean;
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
  /** The crash drills' failpoints, enabled on the writer thread too (failpoints.ts). */
  failpoints?: readonly string[];
  /** Tests: more modules that define named writes, for the writer thread to load (writer-thread.ts). */
  writerModules?: readonly string[];
}

/**
 * Where a local file's writer runs: on a thread of its own (`thread`: `serve` and `dispatch`, whose
 * main thread also answers HTTP and sends webhooks, writer-thread.ts), or on this one (`here`: a
 * command, a short process of its own; tests that run their own operations on the Writer). A
 * libSQL server's writes are network round trips, always made on this thread (remote-writer.ts).
 */
export type WriterPlacement = "thread" | "here";

export async function openDatabase(
  config: DatabaseConfig,
  placement: WriterPlacement = "here",
): Promise<Database> {
  const file = localPath(config.databaseUrl);
  if (file) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    makeDatabaseFilesPrivate(file);
  }
  const options = { synchronous: config.synchronous, busyTimeoutMs: config.busyTimeoutMs };
  if (file && placement === "thread") return openOnWriterThread(file, config, options);
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
      loan = lent.live;
    },
    get storageFull() {
      return writer.storageFull;
    },
    file,
    async close() {
      await writer.idle();
      await driver.close();
    },
  };
}

/**
 * The engine driver with its writer on a thread of its own (writer-thread.ts): this thread keeps a
 * reader connection. Its Writer refuses operations (they cannot cross to the writer thread).
 */
async function openOnWriterThread(
  file: string,
  config: DatabaseConfig,
  options: { synchronous: "FULL" | "NORMAL"; busyTimeoutMs: number },
): Promise<Database> {
  const [thread, { openEngineReader }] = await Promise.all([
    WriterThread.start(
      { path: file, options, failpoints: config.failpoints ?? [], modules: config.writerModules ?? [] },
      {
        // Before anything more is answered: the process stops with the one error line.
        fatal: (report) => stopOnFatal(report.path, decodeError(report.error)),
        died: (reason) => {
          // Its writes were never answered, so none was acknowledged; a supervisor restarts the process.
          process.stderr.write(`outboxd: the writer thread died (${reason}); exiting\n`);
          process.exit(1);
        },
      },
    ),
    import("./engine-driver.ts"),
  ]);
  const driver = openEngineReader(file, options);
  return {
    driver,
    writer: new Writer(driver),
    write: (request, options) => thread.write(request, options),
    lend: (loan) => thread.lend(loan),
    get storageFull() {
      return thread.storageFull;
    },
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
