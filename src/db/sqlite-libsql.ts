// libsql's SQLite (the `libsql` engine package, Node-API: Bun and Deno) behind SqliteConnection
// (sqlite.ts says when it is used). Its native module (~20 ms at a cold start) is loaded at the
// first open only: under Bun by its require, which the executable's bundler follows
// (scripts/build.ts embeds the native module), elsewhere (Deno) by node:module's.
import { createRequire } from "node:module";
import type Database from "libsql";
import type { SqliteArgs, SqliteConnection, SqliteOptions, SqliteRow, SqliteStatement } from "./sqlite.ts";

type Prepared = Database.Statement<unknown[]>;

class LibsqlStatement implements SqliteStatement {
  readonly #s: Prepared;
  /** Its result columns once switched to arrays (at the first rows asked), null: none. */
  #columns: string[] | null | undefined;

  constructor(s: Prepared) {
    this.#s = s;
  }

  get reader(): boolean {
    return this.#s.reader;
  }

  run(args?: SqliteArgs): number {
    return (args === undefined ? this.#s.run() : this.#s.run(args as unknown[])).changes;
  }

  all(args?: SqliteArgs): SqliteRow[] {
    const columns = this.#columns === undefined ? this.#rowsAsArrays() : this.#columns;
    const s = this.#s;
    // A statement without result columns still runs.
    if (columns === null) return (args === undefined ? s.all() : s.all(args as unknown[])) as SqliteRow[];
    const rows = (args === undefined ? s.all() : s.all(args as unknown[])) as unknown[][];
    return rows.map((values) => rowOf(columns, values));
  }

  get(args?: SqliteArgs): SqliteRow | undefined {
    const columns = this.#columns === undefined ? this.#rowsAsArrays() : this.#columns;
    const s = this.#s;
    if (columns === null) {
      if (args === undefined) s.get();
      else s.get(args as unknown[]);
      return undefined;
    }
    const values = (args === undefined ? s.get() : s.get(args as unknown[])) as unknown[] | undefined;
    return values === undefined ? undefined : rowOf(columns, values);
  }

  /**
   * Switches a statement that returns rows to arrays of values (libsql's raw mode) and keeps its
   * column names: rows made here from those cost about a microsecond less per read than libsql's
   * own objects, whose get() also adds a `_metadata` timing key no caller wants.
   */
  #rowsAsArrays(): string[] | null {
    const s = this.#s;
    this.#columns = s.reader
      ? s
          .raw(true)
          .columns()
          .map((column) => column.name)
      : null;
    return this.#columns;
  }
}

/** A row as libsql's object mode makes it: a key per column, in order (a repeated name: the last wins). */
function rowOf(columns: string[], values: unknown[]): SqliteRow {
  const row: SqliteRow = {};
  for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i];
  return row;
}

let Libsql: typeof Database | null = null;

function loadLibsql(): typeof Database {
  return (
    typeof Bun !== "undefined" ? require("libsql") : createRequire(import.meta.url)("libsql")
  ) as typeof Database;
}

export function openLibsql(path: string, options: SqliteOptions, closed: () => void): SqliteConnection {
  Libsql ??= loadLibsql();
  const db = new Libsql(path, {
    ...(options.busyTimeoutMs === undefined ? {} : { timeout: options.busyTimeoutMs }),
    ...(options.readonly ? { readonly: true } : {}),
  });
  return {
    library: "libsql",
    exec: (sql) => {
      db.exec(sql);
    },
    get inTransaction() {
      return db.inTransaction;
    },
    prepare: (sql) => new LibsqlStatement(db.prepare(sql)),
    close: () => {
      db.close();
      closed();
    },
  };
}
