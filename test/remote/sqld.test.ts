// outboxd on a real libSQL server (sqld on 127.0.0.1, test/helpers/sqld.ts): every migration is one
// its parser accepts, and a database that applied a migration's first text is not migrated again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
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
