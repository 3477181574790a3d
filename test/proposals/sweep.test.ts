// The proposals' sweep runs every second with the dispatcher's schedule. With nothing to expire it
// must not write: a durable write costs an fsync that every bookkeeping write queued behind it
// (leases, acks, completions) waits for. A due proposal is still expired by the next sweep.
import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { get } from "../../src/db/op.ts";
import type { Database } from "../../src/db/open.ts";
import { ProposalService } from "../../src/proposals/service.ts";
import { insertProposal } from "../../src/proposals/store.ts";
import { openMigratedDatabase } from "../helpers/database.ts";
import { tempDir } from "../helpers/server.ts";

let db: Database | undefined;
let dir = "";
afterEach(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The real writer, counting the writes it is given (they still run). */
function countWrites(database: Database): { count: number } {
  const counter = { count: 0 };
  const write = database.writer.write.bind(database.writer);
  database.writer.write = ((...args: Parameters<typeof write>) => {
    counter.count += 1;
    return write(...args);
  }) as typeof write;
  return counter;
}

test("a sweep with nothing due writes nothing; a due proposal is expired by the next sweep", async () => {
  dir = tempDir();
  db = await openMigratedDatabase(dir);
  let now = 1_000_000;
  const decisions: [string, number][] = [];
  const proposals = new ProposalService({
    db,
    clock: () => now,
    // The sweep uses only the database, the clock and the retention; proposing and deciding
    // (which need these) are tested over HTTP in test/http/proposals.test.ts.
    commits: undefined as never,
    catalog: undefined as never,
    limits: undefined as never,
    ttlMs: 86_400_000,
    retentionMs: 3_600_000,
    cron: "* * * * * *",
    onDecision: (decision, count) => decisions.push([decision, count]),
  });
  await db.writer.write(
    insertProposal({
      id: "prop_sweep",
      status: "pending",
      summary: "expires at 1,010,000",
      commit: "{}",
      proposedByTokenId: "tok_agent",
      proposedByTokenName: "agent",
      idempotencyKey: null,
      requestHash: null,
      createdAt: now,
      expiresAt: now + 10_000,
      decidedAt: null,
      decidedByTokenId: null,
      decidedByTokenName: null,
      reason: null,
      result: null,
      commitId: null,
    }),
  );
  const writes = countWrites(db);
  await proposals.sweep(); // the first sweep also prunes (once a minute)
  const afterFirst = writes.count;
  now += 5_000;
  await proposals.sweep();
  await proposals.sweep();
  expect(writes.count).toBe(afterFirst);
  expect(decisions).toEqual([]);

  now += 5_000;
  await proposals.sweep();
  expect(writes.count).toBe(afterFirst + 1);
  expect(decisions).toEqual([["expired", 1]]);
  const row = await db.driver.read(
    get<{ status: string }>("SELECT status FROM proposals WHERE id = 'prop_sweep'"),
  );
  expect(row?.status).toBe("expired");
});
