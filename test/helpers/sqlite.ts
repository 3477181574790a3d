// Tests open database files as outboxd does: through this process's copy of SQLite (the rule:
// src/db/sqlite.ts), or through the one that already holds the file here (@libsql/client's
// libsql under a client driver the test opened itself), never a second, or a test's own
// connection beside an in-process server would put two copies of SQLite on one file (the
// corruption sqlite.ts describes). The calls are the few of libsql's (better-sqlite3's) the
// tests use; rows are plain objects.

import { type Op, runOpSync } from "../../src/db/op.ts";
import {
  processSqlite,
  type SqliteArgs,
  type SqliteConnection,
  type SqliteRow,
  sqliteHolding,
} from "../../src/db/sqlite.ts";
import { openSqliteWith } from "../../src/db/sqlite-open.ts";

/** `f(a, b)` binds a and b by position; `f([a, b])` and `f({ name: a })` as given. */
function argsOf(args: unknown[]): SqliteArgs | undefined {
  if (args.length === 0) return undefined;
  const [first] = args;
  if (args.length === 1 && first !== null && typeof first === "object" && !(first instanceof Uint8Array))
    return first as SqliteArgs;
  return args;
}

export interface TestStatement {
  run(...args: unknown[]): { changes: number };
  all(...args: unknown[]): SqliteRow[];
  get(...args: unknown[]): SqliteRow | undefined;
}

export class Database {
  readonly #connection: SqliteConnection;

  /** `timeout`: the busy timeout in ms (5,000 unless given, as libsql's). */
  constructor(path: string, options: { timeout?: number; readonly?: boolean } = {}) {
    this.#connection = openSqliteWith(sqliteHolding(path) ?? processSqlite(), path, {
      busyTimeoutMs: options.timeout ?? 5000,
      ...(options.readonly ? { readonly: true } : {}),
    });
  }

  get library(): SqliteConnection["library"] {
    return this.#connection.library;
  }

  get inTransaction(): boolean {
    return this.#connection.inTransaction;
  }

  exec(sql: string): void {
    this.#connection.exec(sql);
  }

  prepare(sql: string): TestStatement {
    const statement = this.#connection.prepare(sql);
    return {
      run: (...args) => ({ changes: statement.run(argsOf(args)) }),
      all: (...args) => statement.all(argsOf(args)),
      get: (...args) => statement.get(argsOf(args)),
    };
  }

  close(): void {
    this.#connection.close();
  }
}

/**
 * Runs a storage operation in one write transaction (BEGIN IMMEDIATE … COMMIT) on a connection of
 * its own, as the engine driver would: another machine's write to a file this process holds, on
 * the copy of SQLite that holds it.
 */
export function writeOnOwnConnection<T>(path: string, op: Op<T>): T {
  const db = openSqliteWith(sqliteHolding(path) ?? processSqlite(), path, { busyTimeoutMs: 5000 });
  try {
    db.exec("BEGIN IMMEDIATE");
    try {
      const value = runOpSync(op, (statement) => {
        const prepared = db.prepare(statement.sql);
        if (statement.kind === "run") return prepared.run(statement.args);
        return statement.kind === "all" ? prepared.all(statement.args) : prepared.get(statement.args);
      });
      db.exec("COMMIT");
      return value;
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  } finally {
    db.close();
  }
}
