// bun:sqlite, the runtime's own SQLite, behind SqliteConnection (sqlite.ts says when it is used).
// Its library is loaded at the first open, with Bun's require: this module also loads where there is
// no bun:sqlite (Deno), and Workers import it (no top-level await: a Worker's first message would
// be lost while its module waited).
import type { SQLQueryBindings, Statement } from "bun:sqlite";
import type { SqliteArgs, SqliteConnection, SqliteOptions, SqliteRow, SqliteStatement } from "./sqlite.ts";

export class BunStatement implements SqliteStatement {
  readonly #s: Statement<SqliteRow, SQLQueryBindings[]>;
  readonly reader: boolean;

  /** `sql`: its text, for bench/probe/sql-times-preload.ts (which times these calls). */
  constructor(
    s: Statement<SqliteRow, SQLQueryBindings[]>,
    readonly sql: string,
  ) {
    this.#s = s;
    this.reader = s.columnNames.length > 0;
  }

  run(args?: SqliteArgs): number {
    return bound(this.#s, "run", args).changes;
  }

  all(args?: SqliteArgs): SqliteRow[] {
    return bound(this.#s, "all", args);
  }

  get(args?: SqliteArgs): SqliteRow | undefined {
    // bun:sqlite answers null for no row; libsql (and every caller) undefined.
    return bound(this.#s, "get", args) ?? undefined;
  }
}

type Method = "run" | "all" | "get";
type Answer<M extends Method> = ReturnType<Statement<SqliteRow, SQLQueryBindings[]>[M]>;

/** Positional arguments spread (bun:sqlite takes them as parameters), named ones as one object. */
function bound<M extends Method>(
  s: Statement<SqliteRow, SQLQueryBindings[]>,
  method: M,
  args?: SqliteArgs,
): Answer<M> {
  const call = s[method] as (...bindings: SQLQueryBindings[]) => Answer<M>;
  if (args === undefined) return call.call(s);
  if (Array.isArray(args)) return call.apply(s, args as SQLQueryBindings[]);
  return call.call(s, args as SQLQueryBindings);
}

let Database: typeof import("bun:sqlite").Database | null = null;

export function openBunSqlite(path: string, options: SqliteOptions, closed: () => void): SqliteConnection {
  Database ??= (require("bun:sqlite") as typeof import("bun:sqlite")).Database;
  // strict: `:name` parameters bound from keys without the colon (as libsql binds them), and a
  // missing one refused.
  const db = options.readonly
    ? new Database(path, { readonly: true, strict: true })
    : new Database(path, { strict: true });
  try {
    if (options.busyTimeoutMs !== undefined)
      db.run(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`);
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    library: "bun:sqlite",
    exec: (sql) => {
      db.run(sql);
    },
    get inTransaction() {
      return db.inTransaction;
    },
    prepare: (sql) => new BunStatement(db.prepare<SqliteRow, SQLQueryBindings[]>(sql), sql),
    close: () => {
      // true: statements finalized and the connection closed now. Without it bun:sqlite closes with
      // sqlite3_close_v2, which leaves a connection whose statements live (the engine driver keeps
      // its prepared ones) open as a "zombie" until they are garbage-collected: its files stay
      // open and mapped, and the real close comes at a random later time, after another process
      // may have reset the -shm it still maps (a SIGBUS in a drain).
      db.close(true);
      closed();
    },
  };
}
