// An endpoint deleted while commits to it share its group commit must leave no
// pending delivery behind. Real concurrent HTTP requests against one real server; afterwards
// the database file itself is read through a connection of its own.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { expectStatus } from "../dispatch/harness.ts";
import { startServer, type TestResponse, type TestServer, tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

const ROUNDS = 15;

describe("deleting an endpoint inside a group commit", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
    // Another endpoint for the same events, so every fan-out commit has somewhere to go.
    expectStatus(await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/other" }), 201);
  });
  afterAll(async () => {
    await server.stop();
  });

  const fanOut = (round: number, n: number) =>
    server.request("POST", "/v1/commits", {
      events: [{ type: "order.created", aggregate: `orders/${round}-${n}`, payload: { round } }],
    });

  test("no pending delivery points at a deleted endpoint; an explicit one is 422 or dead-lettered", async () => {
    const explicit: { endpoint: string; response: TestResponse }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const endpoint = expectStatus(
        await server.request("POST", "/v1/endpoints", { url: `http://127.0.0.1:9/e${round}` }),
        201,
      ).id as string;
      // Sent at once, so they share the writer's queue: fan-out, delete, fan-out, explicit.
      const [before, deleted, after, named] = await Promise.all([
        fanOut(round, 1),
        server.request("DELETE", `/v1/endpoints/${endpoint}`),
        fanOut(round, 2),
        server.request("POST", "/v1/commits", {
          events: [{ type: "order.created", aggregate: `orders/${round}-3`, endpoints: [endpoint] }],
        }),
      ]);
      expectStatus(before, 201);
      expectStatus(deleted, 200);
      expectStatus(after, 201);
      explicit.push({ endpoint, response: named });
    }
    await server.outboxd.db.writer.idle();

    const file = new Database(join(server.dir, "outboxd.db"), { readonly: true });
    try {
      const orphans = file
        .prepare(
          `SELECT d.id, d.endpoint_id AS endpointId FROM deliveries d WHERE d.status = 'pending'
           AND NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id)`,
        )
        .all();
      expect(orphans).toEqual([]);
      for (const { response } of explicit) {
        if (response.status === 422) {
          // After the delete: the named endpoint does not exist, whatever the batching.
          expect(response.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
            "/events/0/endpoints/0",
          ]);
          continue;
        }
        // Before the delete: its delivery was dead-lettered by it.
        expectStatus(response, 201);
        const id = response.body.events[0].deliveries[0].id as string;
        expect(
          file.prepare("SELECT status, dead_reason AS reason FROM deliveries WHERE id = ?").get(id),
        ).toEqual({
          status: "dead",
          reason: "endpoint_deleted",
        });
      }
      // Every delivery that ever went to a deleted endpoint is dead for that reason.
      const wrong = file
        .prepare(
          `SELECT count(*) AS n FROM deliveries d
           WHERE NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id)
             AND (d.status <> 'dead' OR d.dead_reason <> 'endpoint_deleted')`,
        )
        .get() as { n: number };
      expect(wrong.n).toBe(0);
    } finally {
      file.close();
    }
  });
});

test("start-up dead-letters the orphans an older version left as endpoint_deleted", async () => {
  const dir = tempDir();
  const env = { OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}` };
  try {
    const first = await startServer(env, { dispatch: false });
    const endpoint = expectStatus(
      await first.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/gone" }),
      201,
    ).id as string;
    const committed = expectStatus(
      await first.request("POST", "/v1/commits", { events: [{ type: "a.b", aggregate: "a/1" }] }),
      201,
    );
    const delivery = committed.events[0].deliveries[0].id as string;
    await first.stop();
    // What the old bug left: the endpoint row gone, its delivery still pending.
    const file = new Database(join(dir, "outboxd.db"));
    file.prepare("DELETE FROM endpoints WHERE id = ?").run(endpoint);
    file.close();

    const second = await startServer(env, { dispatch: false });
    try {
      const body = expectStatus(await second.request("GET", `/v1/deliveries/${delivery}`), 200);
      expect(body).toMatchObject({ status: "dead", deadReason: "endpoint_deleted" });
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
