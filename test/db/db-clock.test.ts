// The database clock: leases and deadlines of processes sharing a remote database are compared
// against the database's time. Tested through the client driver on a local file (no libSQL
// server can run here), with a local clock that is deliberately 10 minutes off.
import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { databaseClock } from "../../src/db/db-clock.ts";
import { openDatabase } from "../../src/db/open.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir();
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("a machine whose clock is 10 minutes fast reads the database's time after one sync", async () => {
  const db = await openDatabase({
    databaseUrl: `file:${join(dir, "x.db")}`,
    databaseAuthToken: undefined,
    synchronous: "FULL",
    busyTimeoutMs: 1000,
  });
  try {
    const skew = 10 * 60_000;
    const shared = databaseClock(db.driver, () => Date.now() + skew);
    expect(Math.abs(shared.clock() - Date.now() - skew)).toBeLessThan(1000);
    await shared.sync();
    expect(Math.abs(shared.offsetMs() + skew)).toBeLessThan(1000);
    expect(Math.abs(shared.clock() - Date.now())).toBeLessThan(1000);
  } finally {
    await db.close();
  }
});
