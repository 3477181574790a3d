// The engine driver's rows, on either copy of SQLite (src/db/sqlite.ts; on libsql it reads arrays of
// values and makes the row objects itself, cheaper than libsql's object mode): they must be exactly
// those libsql's object mode gives.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { openEngineDriver } from "../../src/db/engine-driver.ts";
import { all, get, type Op, run } from "../../src/db/op.ts";

const dir = mkdtempSync(join(tmpdir(), "outboxd-rows-"));
const path = join(dir, "rows.db");
const driver = openEngineDriver(path, { synchronous: "FULL", busyTimeoutMs: 5000 });
afterAll(async () => {
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

const TABLE = [
  "CREATE TABLE t (a integer, b text, c real)",
  "INSERT INTO t VALUES (1, 'x', 1.5), (2, NULL, -3)",
];

/**
 * libsql's own object-mode rows for the same statement, without its `_metadata` key: on a copy of
 * the table in memory, never on the driver's file (whose library may be another: src/db/sqlite.ts).
 */
function objectRows(sql: string, args: Record<string, unknown> = {}): Record<string, unknown>[] {
  const db = new Database(":memory:");
  for (const statement of TABLE) db.exec(statement);
  try {
    return (db.prepare(sql).all(args) as Record<string, unknown>[]).map((row) => {
      delete row._metadata;
      return row;
    });
  } finally {
    db.close();
  }
}

test("rows have libsql's keys and values: aliases, nulls, numbers, a repeated name (the last wins)", async () => {
  await driver.transaction(
    (function* (): Op<void> {
      for (const statement of TABLE) yield* run(statement);
    })(),
  );
  const statements = [
    "SELECT a, b, c FROM t ORDER BY a",
    "SELECT a AS first, b AS a, c FROM t ORDER BY a",
    "SELECT a, b AS a, c AS a FROM t ORDER BY 1",
    "SELECT count(*) AS n, max(a) AS top FROM t",
    "SELECT b FROM t WHERE a = :a",
  ];
  for (const sql of statements) {
    const expected = objectRows(sql, { a: 2 });
    expect(await driver.read(all(sql, { a: 2 }))).toEqual(expected);
    expect(await driver.read(get(sql, { a: 2 }))).toEqual(expected[0]);
    // The same statement again (prepared and switched to arrays already).
    expect(await driver.read(all(sql, { a: 2 }))).toEqual(expected);
  }
  expect(await driver.read(get("SELECT a FROM t WHERE a = 99"))).toBeUndefined();
  expect(await driver.read(all("SELECT a FROM t WHERE a = 99"))).toEqual([]);
});

test("a write asked for rows runs: RETURNING answers its rows, a plain write answers nothing", async () => {
  const returned = await driver.transaction(all("INSERT INTO t VALUES (3, 'y', 0) RETURNING a, b AS bee"));
  expect(returned).toEqual([{ a: 3, bee: "y" }]);
  expect(await driver.transaction(get("INSERT INTO t VALUES (4, 'z', 0)"))).toBeUndefined();
  expect(await driver.read(get("SELECT count(*) AS n FROM t WHERE a IN (3, 4)"))).toEqual({ n: 2 });
  expect(await driver.transaction(run("DELETE FROM t WHERE a >= 3"))).toBe(2);
});
