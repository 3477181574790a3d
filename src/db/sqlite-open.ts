// Opens local database files through this process's copy of SQLite (sqlite.ts), loading only that
// library: bun:sqlite is built into Bun; libsql's native module loads only where it is the
// process's library (Deno). Every call outboxd makes on such a connection passes the storage-error
// rule (storage-errors.ts): a fatal error stops the process inside the call that met it.
import {
  claimSqliteFile,
  processSqlite,
  type SqliteArgs,
  type SqliteConnection,
  type SqliteLibrary,
  type SqliteOptions,
  type SqliteStatement,
} from "./sqlite.ts";
import { openBunSqlite } from "./sqlite-bun.ts";
import { openLibsql } from "./sqlite-libsql.ts";
import { stopOnFatal } from "./storage-errors.ts";

const openers: Record<SqliteLibrary, typeof openBunSqlite> = {
  "bun:sqlite": openBunSqlite,
  libsql: openLibsql,
};

/**
 * Opens `path` (or `:memory:`) through this process's SQLite; refuses a file open here through
 * another. A fatal storage error in any call on it stops the process (storage-errors.ts).
 */
export function openSqlite(path: string, options: SqliteOptions = {}): SqliteConnection {
  const fail = (error: unknown): never => {
    stopOnFatal(path, error);
    throw error;
  };
  let db: SqliteConnection;
  try {
    db = openSqliteWith(processSqlite(), path, options);
  } catch (error) {
    return fail(error);
  }
  return {
    library: db.library,
    exec(sql) {
      try {
        db.exec(sql);
      } catch (error) {
        fail(error);
      }
    },
    get inTransaction() {
      return db.inTransaction;
    },
    prepare(sql) {
      try {
        return guarded(db.prepare(sql), fail);
      } catch (error) {
        return fail(error);
      }
    },
    close() {
      try {
        db.close();
      } catch (error) {
        fail(error);
      }
    },
  };
}

function guarded(statement: SqliteStatement, fail: (error: unknown) => never): SqliteStatement {
  return {
    reader: statement.reader,
    run(args?: SqliteArgs) {
      try {
        return statement.run(args);
      } catch (error) {
        return fail(error);
      }
    },
    all(args?: SqliteArgs) {
      try {
        return statement.all(args);
      } catch (error) {
        return fail(error);
      }
    },
    get(args?: SqliteArgs) {
      try {
        return statement.get(args);
      } catch (error) {
        return fail(error);
      }
    },
  };
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
