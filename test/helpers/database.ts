// A migrated outboxd database on a real file in `dir`, opened without a server: for tests of the
// storage operations themselves (commit op, deliveries transitions). Local engine driver,
// synchronous NORMAL (the tests check outcomes, not durability).
import { afterAll, beforeAll } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate.ts";
import { type Database, openDatabase } from "../../src/db/open.ts";
import { tempDir } from "./server.ts";

export async function openMigratedDatabase(dir: string): Promise<Database> {
  const db = await openDatabase({
    databaseUrl: `file:${join(dir, "outboxd.db")}`,
    databaseAuthToken: undefined,
    synchronous: "NORMAL",
    busyTimeoutMs: 5_000,
  });
  await db.writer.write(migrate());
  return db;
}

/**
 * A migrated database for the suite (or describe block) this is called in: opened in a temp dir
 * before its tests, closed and removed after them. The answer gives it once it is open.
 */
export function suiteDatabase(): () => Database {
  let dir = "";
  let db: Database | undefined;
  beforeAll(async () => {
    dir = tempDir();
    db = await openMigratedDatabase(dir);
  });
  afterAll(async () => {
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!db) throw new Error("the suite's database is not open yet (beforeAll)");
    return db;
  };
}
