// The one rule for storage errors of a local database (DESIGN §1.8).
//
// Fatal: any SQLITE_IOERR_* or SQLITE_CORRUPT on a connection to a local file. After a failed
// sync the kernel may have dropped the pages it could not write, and a later sync "succeeds"
// while the data is gone (fsyncgate); SQLite answers the COMMIT with SQLITE_IOERR_FSYNC, keeps the
// connection usable, and WAL recovery at the next open may still bring the "failed" commit back.
// So the process stops at once, from inside the driver's synchronous call, before any other code
// runs: no HTTP answer (success or problem), no ack, no lease, no webhook after it. It writes one
// `error` line naming the database and the SQLite code, and exits 1; a supervisor restarts it.
//
// Not fatal: SQLITE_FULL. The write answers 503 `storage-full` (http/errors.ts) and /readyz
// fails until a write succeeds (Writer.storageFull).
//
// On a worker thread process.exit would end only that thread. The writer thread (writer-worker.ts)
// registers how it reports a fatal error (reportFatalWith): it posts the error to the main thread,
// which stops the process on reading it, and blocks itself, so nothing more runs there. The
// checkpoint worker reports the error's code to the writer's driver, which applies the rule
// (checkpointer.ts, engine-driver.ts).
import { writeSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

/** SQLite's primary result codes this rule names (the low byte of an extended code). */
const IOERR = 10;
const CORRUPT = 11;
const FULL = 13;

/** The SQLite code of an error as the libraries report it ("SQLITE_IOERR_FSYNC"), if it has one. */
export function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}

/**
 * The primary result code of a SQLite error (bun:sqlite's errno, libsql's rawCode, or read from the
 * code's name); undefined for any other error (a system error's errno is not SQLite's).
 */
function primary(error: unknown): number | undefined {
  const code = sqliteCode(error);
  if (code === undefined) return undefined;
  const fields = error as { errno?: unknown; rawCode?: unknown };
  for (const value of [fields.errno, fields.rawCode]) {
    if (typeof value === "number" && value > 0) return value & 0xff;
  }
  if (code.startsWith("SQLITE_IOERR")) return IOERR;
  if (code.startsWith("SQLITE_CORRUPT")) return CORRUPT;
  if (code.startsWith("SQLITE_FULL")) return FULL;
  return undefined;
}

/** SQLITE_IOERR_* or SQLITE_CORRUPT*: the process must stop (see the header). */
export function isFatalStorageError(error: unknown): boolean {
  const code = primary(error);
  return code === IOERR || code === CORRUPT;
}

/** SQLITE_FULL: the disk (or the database's size limit) is full; nothing was written. */
export function isStorageFull(error: unknown): boolean {
  return primary(error) === FULL;
}

/** How a worker thread hands a fatal error on (see the header); never returns. */
export type FatalReporter = (path: string, error: unknown) => never;

let reporter: FatalReporter | null = null;

/** On the writer thread: how a fatal error met there reaches the main thread (writer-worker.ts). */
export function reportFatalWith(report: FatalReporter): void {
  reporter = report;
}

/**
 * Stops the process if `error` is fatal for the local database at `path` (see the header);
 * otherwise (or on a worker thread without a reporter) returns, and the caller throws it on.
 */
export function stopOnFatal(path: string, error: unknown): void {
  if (!isFatalStorageError(error)) return;
  if (!isMainThread) {
    reporter?.(path, error);
    return;
  }
  const code = sqliteCode(error) ?? `SQLite result code ${primary(error)}`;
  const line = JSON.stringify({
    level: "error",
    time: new Date().toISOString(),
    msg: "storage failure: the database can no longer be trusted; stopping without answering anything more",
    database: path,
    code,
    error: error instanceof Error ? error.message : String(error),
  });
  // Synchronously, so the line is out before the process is.
  writeSync(2, `${line}\n`);
  process.exit(1);
}
