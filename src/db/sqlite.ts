// Which copy of SQLite this process runs for its local database files: the runtime's own.
// Under Bun `bun:sqlite`; anywhere else (Deno, src/deno.ts) `libsql`, the engine package
// (Node-API). One per runtime: every local connection of a process (the writer, the reader, the
// checkpoint worker) runs the same copy.
//
// Two copies of SQLite in one process must never have the same file open. SQLite's locks are
// POSIX advisory locks, which the kernel keeps per process and inode: each copy keeps its own
// table of the locks it holds, and one copy closing its descriptor of a file drops the locks the
// other copy holds on it, so the other process-local bookkeeping then guards nothing
// (https://sqlite.org/howtocorrupt.html §2.3): a writer on bun:sqlite beside a checkpoint worker
// on libsql's SQLite corrupted the file in 4 of 17 drains.
//
// Every in-process open of a local file goes through openSqlite (sqlite-open.ts), and
// @libsql/client on a `file:` URL claims its file here too (client-driver.ts): a second library
// on a file this process has open throws instead of corrupting it (claimSqliteFile). Tests open
// files the same way (test/helpers/sqlite.ts); test/architecture/sqlite.test.ts checks that
// nothing else imports either library.
import { resolve } from "node:path";

/** The file path of a `file:` URL (query string dropped), or null for remote URLs. */
export function localPath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path =
    url
      .slice("file:".length)
      .replace(/^\/\/(?=\/)/, "")
      .split("?")[0] ?? "";
  return resolve(path);
}

export type SqliteLibrary = "bun:sqlite" | "libsql";

/** This process's library: the runtime's own SQLite (see the header). */
export function processSqlite(): SqliteLibrary {
  return typeof Bun !== "undefined" ? "bun:sqlite" : "libsql";
}

/** The files this thread has open, by absolute path: through which library, how many times. */
const openFiles = new Map<string, { library: SqliteLibrary; count: number }>();

/**
 * Records that this thread opens `path` through `library`, and answers how to forget it (once
 * closed). Throws when the file is open here through the other library (see the header).
 */
export function claimSqliteFile(path: string, library: SqliteLibrary): () => void {
  if (path === ":memory:" || path === "") return () => {};
  const key = resolve(path);
  const held = openFiles.get(key);
  if (held && held.library !== library) {
    throw new Error(
      `${key} is open in this process through ${held.library}; opening it through ${library} too would ` +
        "let two copies of SQLite break each other's locks (https://sqlite.org/howtocorrupt.html §2.3)",
    );
  }
  if (held) held.count += 1;
  else openFiles.set(key, { library, count: 1 });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const entry = openFiles.get(key);
    if (!entry) return;
    entry.count -= 1;
    if (entry.count === 0) openFiles.delete(key);
  };
}

/** The library through which this thread has `path` open, if it has. */
export function sqliteHolding(path: string): SqliteLibrary | undefined {
  return openFiles.get(resolve(path))?.library;
}

/** Arguments bound to a statement: by position, or by `:name` (keys without the colon). */
export type SqliteArgs = readonly unknown[] | Readonly<Record<string, unknown>>;
export type SqliteRow = Record<string, unknown>;

/**
 * A prepared statement, the same on both libraries: rows as plain objects (a key per column in
 * order, a repeated name: the last wins), integers as numbers (beyond 2^53 they lose precision
 * on both), a missing named argument refused (bun:sqlite) or bound as NULL (libsql).
 */
export interface SqliteStatement {
  /** Whether it answers rows (a SELECT, a PRAGMA that answers, a write with RETURNING). */
  readonly reader: boolean;
  /** Runs it; the rows it changed. */
  run(args?: SqliteArgs): number;
  /** Its rows ([] for a statement that answers none: it still runs). */
  all(args?: SqliteArgs): SqliteRow[];
  /** Its first row, or undefined. */
  get(args?: SqliteArgs): SqliteRow | undefined;
}

/** A connection to one local file (or `:memory:`), the same on both libraries. */
export interface SqliteConnection {
  readonly library: SqliteLibrary;
  exec(sql: string): void;
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
  close(): void;
}

export interface SqliteOptions {
  /** PRAGMA busy_timeout, set before anything else runs (callers' localPragmas set it again). */
  busyTimeoutMs?: number;
  readonly?: boolean;
}
