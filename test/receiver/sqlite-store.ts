// The SQLite inbox store shown in docs/receivers.md, tested here as receivers will run it. It is
// written for bun:sqlite; better-sqlite3 and node:sqlite have the same calls (exec, prepare,
// get, run().changes).
import type { Database } from "bun:sqlite";
import { INBOX_SQL, type InboxEntry, type InboxStore } from "../../src/receiver/verify.ts";

export function sqliteStore(db: Database): InboxStore<Database> {
  // A connection runs one transaction at a time, and applyOnce awaits inside it, so deliveries
  // arriving together on this connection queue here instead of nesting BEGINs.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    transaction(_aggregate, fn) {
      const result = queue.then(async () => {
        // IMMEDIATE takes the write lock now: a delivery on another connection (another process)
        // waits (busy_timeout) instead of reading the same old sequence.
        db.exec("BEGIN IMMEDIATE");
        try {
          const value = await fn(db);
          db.exec("COMMIT");
          return value;
        } catch (error) {
          db.exec("ROLLBACK");
          throw error;
        }
      });
      queue = result.catch(() => null);
      return result;
    },
    get: (tx, aggregate) => tx.prepare<InboxEntry, [string]>(INBOX_SQL.sqlite.get).get(aggregate),
    put: (tx, aggregate, entry) =>
      tx.prepare(INBOX_SQL.sqlite.put).run(aggregate, entry.sequence, entry.eventId).changes === 1,
  };
}
