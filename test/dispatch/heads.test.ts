// The head flag: per (endpoint, aggregate) queue, exactly the pending delivery with the lowest
// sequence is the head, after every kind of transition into or out of `pending`.
import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createOutboxd, type Outboxd } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { all, run } from "../../src/db/op.ts";
import { cancelDelivery } from "../../src/deliveries/cancel.ts";
import { type ClaimedDelivery, claimDeliveries } from "../../src/deliveries/claim.ts";
import { completeDelivery } from "../../src/deliveries/complete.ts";
import { expireDeadlines } from "../../src/deliveries/expire.ts";
import { replayDead, replayDelivery } from "../../src/deliveries/replay.ts";
import { tempDir } from "../helpers/server.ts";

const TOKEN = "heads-test-admin-token";
let outboxd: Outboxd | undefined;
let dir = "";
afterEach(async () => {
  await outboxd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function setup(): Promise<Outboxd> {
  dir = tempDir();
  outboxd = await createOutboxd(
    loadConfig({
      OUTBOXD_DATABASE_URL: `file:${join(dir, "x.db")}`,
      OUTBOXD_ADMIN_TOKEN: TOKEN,
      OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
      OUTBOXD_LOG_LEVEL: "error",
    }),
    { dispatch: false, writer: "here" },
  );
  return outboxd;
}

async function post(o: Outboxd, path: string, body: unknown) {
  const response = await o.http.request(path, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
  });
  expect(response.status).toBe(201);
  return response.json() as Promise<{ id: string }>;
}

interface Row {
  id: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  status: string;
  isHead: number;
}

async function rows(o: Outboxd): Promise<Row[]> {
  return o.db.driver.read(
    all<Row>(
      `SELECT id, endpoint_id AS endpointId, aggregate, sequence, status, is_head AS isHead
       FROM deliveries ORDER BY endpoint_id, aggregate, sequence`,
    ),
  );
}

/** The invariant, checked over every queue: heads are exactly the lowest pending sequences. */
async function expectHeadsConsistent(o: Outboxd): Promise<void> {
  const pending = (await rows(o)).filter((r) => r.status === "pending");
  const lowest = new Map<string, number>();
  for (const r of pending) {
    const key = `${r.endpointId}/${r.aggregate}`;
    lowest.set(key, Math.min(lowest.get(key) ?? Number.POSITIVE_INFINITY, r.sequence));
  }
  for (const r of pending) {
    expect({ id: r.id, head: r.isHead }).toEqual({
      id: r.id,
      head: r.sequence === lowest.get(`${r.endpointId}/${r.aggregate}`) ? 1 : 0,
    });
  }
}

/** Records a claimed delivery's outcome under its lease: delivered (200), or dead (500, past its deadline). */
async function complete(o: Outboxd, c: ClaimedDelivery, owner: string, delivered: boolean): Promise<void> {
  const at = Date.now();
  await o.db.writer.write(
    completeDelivery(
      {
        deliveryId: c.id,
        owner,
        endpointId: c.endpointId,
        startedAt: at,
        durationMs: 1,
        statusCode: delivered ? 200 : 500,
        error: null,
        responsePrefix: null,
      },
      delivered ? { kind: "delivered", at, latencyMs: 0 } : { kind: "dead", at, reason: "deadline_exceeded" },
    ),
  );
}

/** Claims and completes (delivered) until nothing is claimable; the sequences sent per queue, in order. */
async function deliverAll(o: Outboxd): Promise<Map<string, number[]>> {
  const sent = new Map<string, number[]>();
  for (;;) {
    const claimed = await o.db.writer.write(
      claimDeliveries({
        owner: "all",
        now: Date.now(),
        leaseMs: 60_000,
        limit: 100,
        endpointRoom: {},
        endpointLimit: 100,
      }),
    );
    if (claimed.length === 0) return sent;
    for (const c of claimed) {
      const queue = `${c.endpointId}/${c.aggregate}`;
      sent.set(queue, [...(sent.get(queue) ?? []), c.sequence]);
      await complete(o, c, "all", true);
      await expectHeadsConsistent(o);
    }
  }
}

test("heads stay the lowest pending sequence through commits, deliveries, deadlines and replays", async () => {
  const o = await setup();
  const endpoints = [
    await post(o, "/v1/endpoints", { url: "http://127.0.0.1:9/a" }),
    await post(o, "/v1/endpoints", { url: "http://127.0.0.1:9/b" }),
  ];
  for (let round = 0; round < 3; round++) {
    await post(o, "/v1/commits", {
      events: Array.from({ length: 12 }, (_, i) => ({
        type: "t.x",
        aggregate: `agg-${i % 4}`,
        payload: { round, i },
      })),
    });
  }
  await expectHeadsConsistent(o);
  expect((await rows(o)).filter((r) => r.isHead === 1)).toHaveLength(2 * 4);

  // Deliver what the claim hands out: the claim only ever takes heads.
  const claimed = await o.db.writer.write(
    claimDeliveries({
      owner: "t1",
      now: Date.now(),
      leaseMs: 60_000,
      limit: 100,
      endpointRoom: {},
      endpointLimit: 100,
    }),
  );
  expect(claimed).toHaveLength(8);
  const before = await rows(o);
  for (const c of claimed)
    expect(before.find((r) => r.id === c.id)?.sequence).toBe(
      Math.min(
        ...before
          .filter((r) => r.endpointId === c.endpointId && r.aggregate === c.aggregate)
          .map((r) => r.sequence),
      ),
    );
  for (const [i, c] of claimed.entries()) {
    await complete(o, c, "t1", i % 2 === 1);
    await expectHeadsConsistent(o);
  }

  // Deadlines sweep several rows of the same queue at once, heads included.
  await o.db.writer.write(
    run("UPDATE deliveries SET deliver_by = 1 WHERE aggregate = 'agg-1' AND status = 'pending'"),
  );
  expect(await o.db.writer.write(expireDeadlines(Date.now()))).toBeGreaterThan(0);
  await expectHeadsConsistent(o);

  // Replaying an older dead event puts it back in front of its queue's current head.
  const dead = (await rows(o)).find((r) => r.status === "dead" && r.aggregate === "agg-0");
  if (!dead) throw new Error("expected a dead delivery of agg-0");
  expect(await o.db.writer.write(replayDelivery(dead.id, Date.now(), Date.now() + 60_000))).toBe("replayed");
  await expectHeadsConsistent(o);
  expect((await rows(o)).find((r) => r.id === dead.id)?.isHead).toBe(1);

  // Bulk replay of everything dead.
  expect(await o.db.writer.write(replayDead({}, Date.now() + 1, Date.now() + 60_000, 1000))).toBeGreaterThan(
    0,
  );
  await expectHeadsConsistent(o);
  expect(endpoints).toHaveLength(2);
});

test("a queue's next head is found past events its endpoint does not take and rows that left behind the head", async () => {
  const o = await setup();
  const some = await post(o, "/v1/endpoints", { url: "http://127.0.0.1:9/a", eventTypes: ["t.a"] });
  const every = await post(o, "/v1/endpoints", { url: "http://127.0.0.1:9/b" });
  // One aggregate, 24 events; `some` takes every third (t.a), `every` takes them all.
  await post(o, "/v1/commits", {
    events: Array.from({ length: 24 }, (_, i) => ({
      type: i % 3 === 0 ? "t.a" : "t.b",
      aggregate: "agg",
      payload: { i },
    })),
  });
  await expectHeadsConsistent(o);
  const pendingOf = async (endpointId: string) =>
    (await rows(o)).filter((r) => r.endpointId === endpointId && r.status === "pending");

  // Rows behind the head leave first (a cancel, a deadline): the head stays where it is.
  const [head, second, third] = await pendingOf(every.id);
  if (!head || !second || !third) throw new Error("expected pending rows of `every`");
  expect(await o.db.writer.write(cancelDelivery(second.id, Date.now()))).toEqual({ kind: "cancelled" });
  await o.db.writer.write(run("UPDATE deliveries SET deliver_by = 1 WHERE id = :id", { id: third.id }));
  expect(await o.db.writer.write(expireDeadlines(Date.now()))).toBe(1);
  await expectHeadsConsistent(o);
  expect((await rows(o)).find((r) => r.id === head.id)?.isHead).toBe(1);

  // Deliver everything, one claim and completion at a time: each endpoint gets its events in order.
  const sent = await deliverAll(o);
  expect(sent.get(`${some.id}/agg`)).toEqual([1, 4, 7, 10, 13, 16, 19, 22]);
  expect(sent.get(`${every.id}/agg`)).toEqual(
    Array.from({ length: 24 }, (_, i) => i + 1).filter((n) => n !== second.sequence && n !== third.sequence),
  );
  expect(await pendingOf(every.id)).toEqual([]);

  // A replay of the two that died behind the head: the older one heads the queue again.
  expect(
    await o.db.writer.write(replayDead({ endpoint: every.id }, Date.now() + 1, Date.now() + 60_000, 10)),
  ).toBe(2);
  await expectHeadsConsistent(o);
  expect((await rows(o)).find((r) => r.id === second.id)?.isHead).toBe(1);
});

test("a database from before the heads-only index (migration 0015) keeps its queues: their heads are indexed, every event sent in order", async () => {
  const o = await setup();
  const endpoint = await post(o, "/v1/endpoints", { url: "http://127.0.0.1:9/a" });
  await post(o, "/v1/commits", {
    events: Array.from({ length: 30 }, (_, i) => ({
      type: "t.x",
      aggregate: `agg-${i % 3}`,
      payload: { i },
    })),
  });
  // Back to the indexes as they were before migration 0015 (the rows' head flags were kept the same way).
  const migration = migrations.find((m) => m.tag.startsWith("0015_"));
  if (!migration) throw new Error("expected migration 0015");
  await o.db.writer.write(function* () {
    yield* run("DROP INDEX deliveries_heads");
    yield* run("DROP INDEX deliveries_deadline");
    yield* run(
      "CREATE INDEX deliveries_queue ON deliveries (endpoint_id, aggregate, sequence) WHERE status = 'pending'",
    );
    yield* run("CREATE INDEX deliveries_deadline ON deliveries (deliver_by) WHERE status = 'pending'");
    yield* run("DELETE FROM __drizzle_migrations WHERE hash = :hash", { hash: migration.hash });
  });
  expect(await o.db.writer.write(migrate())).toEqual([migration.tag]);
  const heads = await o.db.driver.read(
    all<{ n: number }>(
      "SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_heads WHERE status = 'pending' AND is_head = 1",
    ),
  );
  expect(heads[0]?.n).toBe(3);
  await expectHeadsConsistent(o);
  const sent = await deliverAll(o);
  for (const aggregate of ["agg-0", "agg-1", "agg-2"])
    expect(sent.get(`${endpoint.id}/${aggregate}`)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
});

test("replayed older deliveries are not claimed while a later one of their queue is leased; once that lease ends they go in order", async () => {
  const o = await setup();
  await post(o, "/v1/endpoints", { url: "http://127.0.0.1:9/replay" });
  await post(o, "/v1/commits", {
    events: [1, 2, 3].map((n) => ({ type: "t.x", aggregate: "agg-replay", payload: { n } })),
  });
  const [one, two, three] = await rows(o);
  if (!one || !two || !three) throw new Error("expected three deliveries");
  const t0 = Date.now();
  const claim = (now: number, owner: string) =>
    o.db.writer.write(
      claimDeliveries({ owner, now, leaseMs: 60_000, limit: 100, endpointRoom: {}, endpointLimit: 100 }),
    );
  // 1 and 2 are cancelled (dead), 3 is leased and in flight.
  expect(await o.db.writer.write(cancelDelivery(one.id, t0))).toEqual({ kind: "cancelled" });
  expect(await o.db.writer.write(cancelDelivery(two.id, t0))).toEqual({ kind: "cancelled" });
  expect((await claim(t0, "first")).map((c) => c.id)).toEqual([three.id]);
  // An operator replays 2, then 1, while 3 is in flight: nothing more of the queue is claimed.
  expect(await o.db.writer.write(replayDelivery(two.id, t0 + 1, t0 + 3_600_000))).toBe("replayed");
  expect(await claim(t0 + 2, "second")).toEqual([]);
  expect(await o.db.writer.write(replayDelivery(one.id, t0 + 3, t0 + 3_600_000))).toBe("replayed");
  expect(await claim(t0 + 4, "second")).toEqual([]);
  await expectHeadsConsistent(o);
  // 3's lease ends (its sender never answered): 1 goes, then 2, then 3 again.
  const sent: number[] = [];
  let now = t0 + 60_000;
  for (;;) {
    const claimed = await claim(now, `after-${now}`);
    expect(claimed.length).toBeLessThanOrEqual(1);
    if (claimed.length === 0) break;
    const [c] = claimed as [ClaimedDelivery];
    sent.push(c.sequence);
    await complete(o, c, `after-${now}`, true);
    await expectHeadsConsistent(o);
    now += 1;
  }
  expect(sent).toEqual([1, 2, 3]);
});
