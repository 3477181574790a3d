// A migrated outboxd database on a real file in `dir`, opened without a server: for tests of the
// storage operations themselves (commit op, deliveries transitions). Local engine driver,
// synchronous NORMAL (the tests check outcomes, not durability).
import { join } from "node:path";
import { migrate } from "../../src/db/migrate.ts";
import { type Database, openDatabase } from "../../src/db/open.ts";

export async function openMigratedDatabase(dir: string): Promise<Database> {
  const db = await openDatabase({
    databaseUrl: `file:${join(dir, "outboxd.db")}`,
    databaseAuthToken: undefined,
    driver: "engine",
    synchronous: "NORMAL",
    busyTimeoutMs: 5_000,
  });
  await db.writer.write(migrate());
  return db;
}
