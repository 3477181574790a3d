// With a remote database shared by several machines, every time that leases, deadlines and
// retries are compared against must come from one clock: the database's (DESIGN §8). This
// clock reads the local time plus an offset measured against the database, refreshed by
// `sync()` (the dispatcher calls it on every sweep), so no query pays a round trip for it.
import type { Clock } from "../lib/time.ts";
import type { Driver } from "./driver.ts";
import { get } from "./op.ts";

export interface DatabaseClock {
  clock: Clock;
  /** Measures the offset again; the midpoint of the round trip stands for the database's reading. */
  sync(): Promise<void>;
  offsetMs(): number;
}

export function databaseClock(driver: Driver, local: Clock = Date.now): DatabaseClock {
  let offset = 0;
  return {
    clock: () => local() + offset,
    offsetMs: () => offset,
    async sync() {
      const before = local();
      const row = await driver.read(
        get<{ now: number }>("SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER) AS now"),
      );
      const after = local();
      if (row) offset = Number(row.now) - Math.round((before + after) / 2);
    },
  };
}
