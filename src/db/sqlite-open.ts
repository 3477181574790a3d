// Opens local database files through this process's copy of SQLite (sqlite.ts), loading only that
// library: bun:sqlite is built into Bun; libsql's native module loads only where it is the
// process's library (Deno).
import {
  claimSqliteFile,
  processSqlite,
  type SqliteConnection,
  type SqliteLibrary,
  type SqliteOptions,
} from "./sqlite.ts";
import { openBunSqlite } from "./sqlite-bun.ts";
import { openLibsql } from "./sqlite-libsql.ts";

const openers: Record<SqliteLibrary, typeof openBunSqlite> = {
  "bun:sqlite": openBunSqlite,
  libsql: openLibsql,
};

/** Opens `path` (or `:memory:`) through this process's SQLite; refuses a file open here through another. */
export function openSqlite(path: string, options: SqliteOptions = {}): SqliteConnection {
  return openSqliteWith(processSqlite(), path, options);
}

/**
 * Opens `path` through `library`, refusing a file open here through the other. Only for tests
 * that compare the two libraries behind SqliteConnection (test/db/sqlite-parity.test.ts).
 */
export function openSqliteWith(
  library: SqliteLibrary,
  path: string,
  options: SqliteOptions = {},
): SqliteConnection {
  const release = claimSqliteFile(path, library);
  try {
    return openers[library](path, options, release);
  } catch (error) {
    release();
    throw error;
  }
}
