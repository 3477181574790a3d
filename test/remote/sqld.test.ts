// outboxd on a real libSQL server (sqld on 127.0.0.1, test/helpers/sqld.ts): every migration is one
// its parser accepts, and a database that applied a migration's first text is not migrated again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { hranaBatcher } from "../../src/db/hrana-batch.ts";
import { migrate, pendingMigrations } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { all } from "../../src/db/op.ts";
import { openDatabase } from "../../src/db/open.ts";
import { tempDir } from "../helpers/server.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

let sqld: Sqld;
beforeAll(async () => {
  sqld = await startSqld();
});
afterAll(async () => {
  await sqld?.stop();
});

test("every migration applies on a fresh libSQL server, and none is pending after", async () => {
  const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: sqld.url }));
  try {
    expect(db.file).toBeNull();
    expect(await db.driver.read(pendingMigrations())).toEqual(migrations.map((m) => m.tag));
    expect(await db.writer.write(migrate())).toEqual(migrations.map((m) => m.tag));
    expect(await db.driver.read(pendingMigrations())).toEqual([]);
    expect(await db.writer.write(migrate())).toEqual([]);
    const tables = await db.driver.read(
      all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'"),
    );
    expect(tables.map((t) => t.name)).toContain("record_versions");
  } finally {
    await db.close();
  }
});

test("a migration whose text changed after it was applied (a new hash, the same journal time) is not applied again", async () => {
  const dir = tempDir();
  // Raw operations through this thread's Writer: the writer on this thread.
  const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}` }));
  try {
    // As recorded by a release whose 0009 had another text.
    const first = migrations.map((m) => (m.tag.startsWith("0009_") ? { ...m, hash: "0".repeat(64) } : m));
    expect(await db.writer.write(migrate(first))).toHaveLength(migrations.length);
    expect(await db.driver.read(pendingMigrations())).toEqual([]);
    expect(await db.writer.write(migrate())).toEqual([]);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("outboxd's batches stay within sqld's stored SQL texts: more than 50 repeated texts, and texts over 5 kB", async () => {
  const batcher = hranaBatcher(sqld.url, undefined);
  if (!batcher) throw new Error("no batcher for a server URL");
  // 60 texts, each twice (each would be stored once), and a 6 kB text twice.
  const texts = Array.from({ length: 60 }, (_, i) => `SELECT ${i} AS n`);
  const long = `SELECT '${"x".repeat(6_000)}' AS n`;
  const statements = [...texts, ...texts, long, long].map((sql) => ({ sql, args: {} }));
  const answers = await batcher.batch(statements, "read");
  expect(answers).toHaveLength(statements.length);
  // One stream, several requests: the texts stored count against the stream's cap.
  const tx = await batcher.transaction("write");
  for (let round = 0; round < 3; round++) {
    const mine = Array.from({ length: 30 }, (_, i) => `SELECT ${round * 100 + i} AS n`);
    expect(await tx.batch([...mine, ...mine].map((sql) => ({ sql, args: {} })))).toHaveLength(60);
  }
  await tx.batch([{ sql: "COMMIT", args: {} }]);
});
