// The two copies of SQLite outboxd runs (src/db/sqlite.ts: bun:sqlite under Bun, libsql under Deno)
// behind the one interface the engine driver
// uses, side by side, each on a real file of its own: what the rest of outboxd reads from them
// (error codes and messages, changes, rows, integers, BLOBs, arguments, transactions, PRAGMAs,
// the busy timeout) is the same, and where the libraries differ the difference is pinned here.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { localPragmas } from "../../src/db/driver.ts";
import { openEngineDriver } from "../../src/db/engine-driver.ts";
import { all, run } from "../../src/db/op.ts";
import {
  claimSqliteFile,
  processSqlite,
  type SqliteConnection,
  type SqliteLibrary,
} from "../../src/db/sqlite.ts";
import { openSqliteWith } from "../../src/db/sqlite-open.ts";

const dir = mkdtempSync(join(tmpdir(), "outboxd-sqlite-parity-"));
const opened: SqliteConnection[] = [];
afterAll(() => {
  for (const connection of opened) connection.close();
  rmSync(dir, { recursive: true, force: true });
});

const LIBRARIES: SqliteLibrary[] = ["bun:sqlite", "libsql"];
const options = { synchronous: "FULL" as const, busyTimeoutMs: 200 };

function open(library: SqliteLibrary, name: string): SqliteConnection {
  const connection = openSqliteWith(library, join(dir, `${library.replace(":", "-")}-${name}.db`), {
    busyTimeoutMs: options.busyTimeoutMs,
  });
  for (const pragma of localPragmas(options)) connection.exec(pragma);
  opened.push(connection);
  return connection;
}

function thrown(f: () => unknown): { code: unknown; message: string } {
  try {
    f();
  } catch (error) {
    return { code: (error as { code?: unknown }).code, message: (error as Error).message };
  }
  throw new Error("expected a throw");
}

const TABLE =
  "CREATE TABLE t (id INTEGER PRIMARY KEY, u TEXT UNIQUE, n TEXT NOT NULL DEFAULT 'x', c INTEGER CHECK (c IS NULL OR c >= 0), b BLOB)";

/** What each library answers, for the comparisons below. */
function observe(library: SqliteLibrary) {
  const db = open(library, "observe");
  db.exec(TABLE);
  const insert = db.prepare("INSERT INTO t (u, c, b) VALUES (:u, :c, :b)");
  const byPosition = db.prepare("INSERT INTO t (u, c, b) VALUES (?, ?, ?)");
  const changes = [
    insert.run({ u: "a", c: 1, b: null }),
    insert.run(["big", 2n ** 60n, new Uint8Array([1, 2, 3])]),
    byPosition.run(["undefined", undefined, null]),
    byPosition.run(["beyond", 2 ** 53 + 2, null]),
    db.prepare("UPDATE t SET n = 'y' WHERE id > 0").run(),
  ];
  const errors = {
    unique: thrown(() => insert.run({ u: "a", c: 1, b: null })),
    check: thrown(() => insert.run({ u: "neg", c: -1, b: null })),
    notNull: thrown(() => db.prepare("INSERT INTO t (u, n) VALUES ('z', NULL)").run()),
    syntax: thrown(() => db.prepare("SELEC 1")),
  };
  const rows = db.prepare("SELECT id, u, c, typeof(c) AS tc, b FROM t ORDER BY id").all();
  const repeated = db.prepare("SELECT 1 AS a, 2 AS a, 3 AS b").get();
  const none = db.prepare("SELECT 1 FROM t WHERE id = -1").get();
  const readers = {
    select: db.prepare("SELECT 1").reader,
    write: db.prepare("DELETE FROM t WHERE id = -1").reader,
    returning: db.prepare("UPDATE t SET n = n WHERE id = -1 RETURNING id").reader,
    pragma: db.prepare("PRAGMA journal_mode").reader,
  };
  const returning = db.prepare("UPDATE t SET n = 'r' WHERE id = 1 RETURNING id, n AS name").all();
  const writeAsRows = db.prepare("UPDATE t SET n = 'q' WHERE id = 1").all();
  const named = db.prepare("SELECT :b AS b, :a AS a, :b || :a AS ba").get({ a: "1", b: "2" });
  const positional = db.prepare("SELECT :b AS b, :a AS a, :b || :a AS ba").get(["2", "1"]);
  const before = db.inTransaction;
  db.exec("BEGIN IMMEDIATE");
  const during = db.inTransaction;
  db.exec("ROLLBACK");
  const pragmas = {
    journal: db.prepare("PRAGMA journal_mode").get(),
    synchronous: db.prepare("PRAGMA synchronous").get(),
    busy: db.prepare("PRAGMA busy_timeout").get(),
    cache: db.prepare("PRAGMA cache_size").get(),
    checkpoint: db.prepare("PRAGMA wal_autocheckpoint").get(),
    temp: db.prepare("PRAGMA temp_store").get(),
    keys: db.prepare("PRAGMA foreign_keys").get(),
    limit: db.prepare("PRAGMA journal_size_limit").get(),
  };
  const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get();
  return {
    changes,
    errors,
    rows,
    repeated,
    none,
    readers,
    returning,
    writeAsRows,
    named,
    positional,
    transaction: [before, during, db.inTransaction],
    pragmas,
    checkpointColumns: Object.keys(checkpoint ?? {}),
  };
}

describe("bun:sqlite and libsql behind SqliteConnection", () => {
  const [bun, libsql] = LIBRARIES.map(observe) as [ReturnType<typeof observe>, ReturnType<typeof observe>];

  test("changes, error codes and messages (what http/errors.ts maps)", () => {
    expect(bun.changes).toEqual([1, 1, 1, 1, 4]);
    expect(libsql.changes).toEqual(bun.changes);
    expect(bun.errors).toEqual({
      unique: { code: "SQLITE_CONSTRAINT_UNIQUE", message: "UNIQUE constraint failed: t.u" },
      check: { code: "SQLITE_CONSTRAINT_CHECK", message: "CHECK constraint failed: c IS NULL OR c >= 0" },
      notNull: { code: "SQLITE_CONSTRAINT_NOTNULL", message: "NOT NULL constraint failed: t.n" },
      syntax: { code: "SQLITE_ERROR", message: 'near "SELEC": syntax error' },
    });
    expect(libsql.errors).toEqual(bun.errors);
  });

  test("rows: plain objects, integers as numbers (beyond 2^53 as the nearest double), bigint and undefined arguments, BLOBs", () => {
    const expected = [
      { id: 1, u: "a", c: 1, tc: "integer", b: null },
      { id: 2, u: "big", c: 2 ** 60, tc: "integer", b: new Uint8Array([1, 2, 3]) },
      { id: 3, u: "undefined", c: null, tc: "null", b: null },
      { id: 4, u: "beyond", c: 2 ** 53 + 2, tc: "integer", b: null },
    ];
    // A BLOB comes back as a Uint8Array from bun:sqlite, a Buffer (a Uint8Array too) from libsql:
    // outboxd stores none (no BLOB column in its schema).
    for (const rows of [bun.rows, libsql.rows]) {
      expect(
        rows.map((row) => ({ ...row, b: row.b === null ? null : new Uint8Array(row.b as Uint8Array) })),
      ).toEqual(expected);
      expect(rows[1]?.b).toBeInstanceOf(Uint8Array);
    }
    expect(bun.repeated).toEqual({ a: 2, b: 3 });
    expect(libsql.repeated).toEqual(bun.repeated);
    expect(bun.none).toBeUndefined();
    expect(libsql.none).toBeUndefined();
  });

  test("readers, RETURNING, a write asked for rows, named and positional arguments", () => {
    expect(bun.readers).toEqual({ select: true, write: false, returning: true, pragma: true });
    expect(libsql.readers).toEqual(bun.readers);
    expect(bun.returning).toEqual([{ id: 1, name: "r" }]);
    expect(libsql.returning).toEqual(bun.returning);
    expect(bun.writeAsRows).toEqual([]);
    expect(libsql.writeAsRows).toEqual([]);
    expect(bun.named).toEqual({ b: "2", a: "1", ba: "21" });
    expect(bun.positional).toEqual(bun.named);
    expect(libsql.named).toEqual(bun.named);
    expect(libsql.positional).toEqual(bun.named);
  });

  test("inTransaction, the local PRAGMAs as set, the checkpoint's answer (checkpoint-worker.ts reads busy)", () => {
    expect(bun.transaction).toEqual([false, true, false]);
    expect(libsql.transaction).toEqual(bun.transaction);
    expect(bun.pragmas).toEqual({
      journal: { journal_mode: "wal" },
      synchronous: { synchronous: 2 },
      busy: { timeout: 200 },
      cache: { cache_size: -8192 },
      checkpoint: { wal_autocheckpoint: 10000 },
      temp: { temp_store: 2 },
      keys: { foreign_keys: 0 },
      limit: { journal_size_limit: 67108864 },
    });
    expect(libsql.pragmas).toEqual(bun.pragmas);
    expect(bun.checkpointColumns).toEqual(["busy", "log", "checkpointed"]);
    expect(libsql.checkpointColumns).toEqual(bun.checkpointColumns);
  });
});

test.each(LIBRARIES)(
  "%s: SQLITE_BUSY after the busy timeout, carried across the writer thread with its code",
  (library) => {
    const first = open(library, "busy");
    first.exec("CREATE TABLE k (v)");
    const second = openSqliteWith(library, join(dir, `${library.replace(":", "-")}-busy.db`), {
      busyTimeoutMs: 50,
    });
    opened.push(second);
    first.exec("BEGIN IMMEDIATE");
    try {
      const busy = thrown(() => second.exec("BEGIN IMMEDIATE"));
      expect(busy).toEqual({ code: "SQLITE_BUSY", message: "database is locked" });
    } finally {
      first.exec("ROLLBACK");
    }
  },
);

test("where they differ: a missing named argument (bun:sqlite refuses it, libsql binds NULL); booleans (bun:sqlite binds 1, libsql aborts the process: outboxd binds none)", () => {
  const bunDb = open("bun:sqlite", "differ");
  const libsqlDb = open("libsql", "differ");
  expect(thrown(() => bunDb.prepare("SELECT :a AS a, :b AS b").get({ a: 1 })).message).toContain('"b"');
  expect(libsqlDb.prepare("SELECT :a AS a, :b AS b").get({ a: 1 })).toEqual({ a: 1, b: null });
  expect(bunDb.prepare("SELECT ? AS t").get([true])).toEqual({ t: 1 });
});

/** This process's open descriptors of files whose path contains `part`. */
function descriptorsOf(part: string): string[] {
  const links: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      if (link.includes(part)) links.push(link);
    } catch {
      // closed meanwhile
    }
  }
  return links;
}

// bun:sqlite only. libsql's close() cannot finalize statements (its Statement has no finalize):
// a connection whose prepared statements are alive stays open until they are garbage-collected,
// as it always has on the libsql path (left as it is).
test("bun:sqlite: close() closes now, prepared statements alive or not (no connection left open until GC)", () => {
  const connection = openSqliteWith("bun:sqlite", join(dir, "bun-close.db"));
  connection.exec("PRAGMA journal_mode = WAL");
  connection.exec("CREATE TABLE c (v)");
  const kept = connection.prepare("INSERT INTO c VALUES (1)");
  kept.run();
  connection.prepare("SELECT v FROM c").all();
  expect(descriptorsOf("bun-close.db").length).toBeGreaterThan(0);
  connection.close();
  expect(descriptorsOf("bun-close.db")).toEqual([]);
});

test.skipIf(processSqlite() !== "bun:sqlite")(
  "the engine driver's close leaves no descriptor of its files open (connections, WAL sync, the checkpoint worker's -shm)",
  async () => {
    const path = join(dir, "engine-close.db");
    const driver = openEngineDriver(path, { synchronous: "FULL", busyTimeoutMs: 5000 });
    await driver.transaction(run("CREATE TABLE e (v)"));
    await driver.transaction(run("INSERT INTO e VALUES (1)"));
    expect(await driver.read(all("SELECT v FROM e"))).toEqual([{ v: 1 }]);
    const deadline = Date.now() + 20_000;
    while (!driver.backgroundCheckpoints().working && Date.now() < deadline) await Bun.sleep(10);
    expect(driver.backgroundCheckpoints().working).toBe(true);
    await driver.close();
    expect(descriptorsOf("engine-close.db")).toEqual([]);
  },
);

test("one file, one library: a file open through one refuses the other until closed", () => {
  const path = join(dir, "claimed.db");
  const held = openSqliteWith("bun:sqlite", path);
  expect(() => openSqliteWith("libsql", path)).toThrow(/open in this process through bun:sqlite/);
  const release = claimSqliteFile(path, "bun:sqlite");
  release();
  held.close();
  const other = openSqliteWith("libsql", path);
  expect(() => claimSqliteFile(path, "bun:sqlite")).toThrow(/through libsql/);
  other.close();
  openSqliteWith("bun:sqlite", path).close();
});

test("one SQLite per runtime: bun:sqlite under Bun; the removed knobs that chose otherwise are refused", () => {
  expect(processSqlite()).toBe("bun:sqlite");
  for (const name of ["OUTBOXD_SQLITE", "OUTBOXD_DRIVER", "OUTBOXD_WRITER_THREAD"]) {
    expect(() => loadConfig({ [name]: "libsql" })).toThrow(
      new RegExp(`${name} is no longer a setting: .+; unset it`),
    );
  }
});
