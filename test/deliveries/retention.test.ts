// An Idempotency-Key is honoured for its whole 24 h window (DESIGN §3) even when
// OUTBOXD_RETENTION is shorter; retention still prunes everything else on time, except the
// ledger (DESIGN §13), which it never prunes. Time is moved
// by pruning "as of" a later moment instead of sleeping.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { IDEMPOTENCY_TTL_MS } from "../../src/lib/idempotency.ts";
import { expectStatus, sql } from "../dispatch/harness.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ OUTBOXD_RETENTION: "2s" });
});
afterAll(async () => {
  await server.stop();
});

const commit = (key?: string) =>
  server.request(
    "POST",
    "/v1/commits",
    { records: [{ collection: "notes", id: key ?? crypto.randomUUID(), data: { n: 1 } }] },
    key === undefined ? {} : { "idempotency-key": key },
  );

test("a retry inside the window gets the stored answer after a prune; outside it, the key is gone", async () => {
  const key = `key-${crypto.randomUUID()}`;
  const first = expectStatus(await commit(key), 201);
  const keyless = expectStatus(await commit(), 201);
  const dispatcher = server.outboxd.dispatcher;
  if (!dispatcher) throw new Error("the dispatcher runs in this server");

  // 3 s later: past the 2 s retention, well inside the key's 24 h.
  await dispatcher.pruneNow(Date.now() + 3_000);
  const commits = async () => (await sql<{ id: string }>(server, "SELECT id FROM commits")).map((c) => c.id);
  const keys = async () =>
    (await sql<{ commit_id: string }>(server, "SELECT commit_id FROM idempotency_keys")).map(
      (k) => k.commit_id,
    );
  // The ledger keeps every commit (DESIGN §13); only the stored response of a key expires.
  expect(await commits()).toContain(first.commitId);
  expect(await commits()).toContain(keyless.commitId);
  expect(await keys()).toContain(first.commitId);
  const retry = await commit(key);
  expect(retry.status).toBe(201);
  expect(retry.body.commitId).toBe(first.commitId);
  expect(retry.body.records[0].version).toBe(1);

  // Once the window is over, retention takes the stored response; the commit stays in the ledger.
  const pruned = await dispatcher.pruneNow(Date.now() + IDEMPOTENCY_TTL_MS + 3_000);
  expect(pruned.idempotencyKeys).toBeGreaterThanOrEqual(1);
  expect(await keys()).not.toContain(first.commitId);
  expect(await commits()).toContain(first.commitId);
});
