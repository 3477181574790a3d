// A fan-out larger than a commit inserts itself (INLINE_DELIVERIES) is written compactly in the
// commit and expanded into deliveries after it, in chunks (src/deliveries/enqueue.ts).
// Checked on the operations (the expansion run by hand, so every state in between is seen), and
// through a real process killed between its commit and the expansion.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type CommitOutcome, commitOp, type EventWrite } from "../../src/commit/commit-op.ts";
import { all, get } from "../../src/db/op.ts";
import { cancelDelivery } from "../../src/deliveries/cancel.ts";
import { EXPAND_CHUNK, expandFanOuts, INLINE_DELIVERIES } from "../../src/deliveries/enqueue.ts";
import { getDelivery } from "../../src/deliveries/read.ts";
import { replayDelivery } from "../../src/deliveries/replay.ts";
import { createEndpoint, deleteEndpoint } from "../../src/endpoints/endpoints.ts";
import { apiClient } from "../helpers/api.ts";
import { suiteDatabase } from "../helpers/database.ts";
import { type Child, startChild } from "../helpers/process.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

const ENDPOINTS = 3;
/** Events in the large commit: over the inline limit once fanned out to every endpoint. */
const EVENTS = Math.ceil((INLINE_DELIVERIES + 1) / ENDPOINTS) + 20;
const AGGREGATES = 7;

interface DeliveryRow {
  id: string;
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  status: string;
  isHead: number;
  deadReason: string | null;
}

describe("deferred fan-out, operation by operation", () => {
  const database = suiteDatabase();
  let endpoints: string[];
  beforeAll(async () => {
    const db = database();
    endpoints = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      const endpoint = await db.writer.write(
        createEndpoint(
          { url: `http://127.0.0.1:9/${i}`, eventTypes: [], description: null, sealedSecrets: "[]" },
          Date.now(),
        ),
      );
      endpoints.push(endpoint.id);
    }
  });

  const event = (aggregate: string, id?: string): EventWrite => ({
    id,
    type: "fan.out",
    aggregate,
    payload: "{}",
    deliverAfter: null,
    deliverBy: Date.now() + 3_600_000,
    endpoints: undefined,
  });
  const commit = (events: EventWrite[]) =>
    database().writer.write(
      commitOp({
        by: { tokenId: "tok_test", tokenName: "test" },
        records: [],
        events,
        idempotency: undefined,
        traceparent: undefined,
        conflictStatus: 409,
        maxDeliveries: 10_000,
        now: Date.now(),
      }),
    );
  const deliveries = () =>
    database().driver.read(
      all<DeliveryRow>(
        `SELECT id, event_id AS eventId, endpoint_id AS endpointId, aggregate, sequence, status,
           is_head AS isHead, dead_reason AS deadReason FROM deliveries ORDER BY id`,
      ),
    );
  const fanOutRows = async () =>
    (await database().driver.read(get<{ n: number }>("SELECT count(*) AS n FROM fan_outs")))?.n ?? 0;
  const named = (outcome: CommitOutcome) =>
    outcome.result.events.flatMap((e) => e.deliveries.map((d) => ({ ...d, eventId: e.id })));

  test("a large fan-out is answered in full, stored compactly, and expanded in chunks into exactly those deliveries, heads and order kept; a deleted endpoint's share is dead", async () => {
    const big = await commit(
      Array.from({ length: EVENTS }, (_, i) => event(`big/${i % AGGREGATES}`, crypto.randomUUID())),
    );
    const bigNamed = named(big);
    expect(bigNamed.length).toBe(EVENTS * ENDPOINTS);
    expect(big.deliveries).toBe(EVENTS * ENDPOINTS);
    expect(big.deferredDeliveries).toBe(EVENTS * ENDPOINTS);
    // Nothing inserted yet: one row per event waits.
    expect(await deliveries()).toEqual([]);
    expect(await fanOutRows()).toBe(EVENTS);

    // A later small commit of an aggregate that waits is deferred behind it; another aggregate is not.
    const behind = await commit([event("big/0")]);
    expect(behind.deferredDeliveries).toBe(ENDPOINTS);
    const aside = await commit([event("aside/1")]);
    expect(aside.deferredDeliveries).toBe(0);
    expect((await deliveries()).map((d) => d.aggregate)).toEqual(Array(ENDPOINTS).fill("aside/1"));

    // An event-id retry answers every delivery its commit named, expanded or not.
    const first = big.result.events[0];
    const retried = await commit([event("big/0", first?.id)]);
    expect(retried.result.events[0]?.deliveries).toEqual(
      [...(first?.deliveries ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );

    // One chunk, then the endpoint goes away, then the rest.
    const chunk = await database().writer.write(expandFanOuts(EXPAND_CHUNK, Date.now()));
    expect(chunk.deliveries).toBe(EXPAND_CHUNK);
    expect(chunk.more).toBe(true);
    expect((await deliveries()).length).toBe(ENDPOINTS + EXPAND_CHUNK);
    const gone = endpoints[1] as string;
    await database().writer.write(deleteEndpoint(gone, Date.now()));
    let rounds = 1;
    for (;;) {
      const next = await database().writer.write(expandFanOuts(EXPAND_CHUNK, Date.now()));
      rounds += 1;
      expect(next.deliveries).toBeLessThanOrEqual(EXPAND_CHUNK);
      expect(next.endpointIds.has(gone)).toBe(false);
      if (!next.more) break;
    }
    expect(rounds).toBe(Math.ceil(((EVENTS + 1) * ENDPOINTS) / EXPAND_CHUNK));
    expect(await fanOutRows()).toBe(0);

    const rows = await deliveries();
    // Exactly the deliveries the commits named, each once.
    const expected = [...bigNamed, ...named(behind), ...named(aside)].map((d) => d.id).sort();
    expect(rows.map((d) => d.id)).toEqual(expected);
    const byId = new Map(rows.map((d) => [d.id, d]));
    for (const d of [...bigNamed, ...named(behind)]) {
      expect(byId.get(d.id)?.endpointId).toBe(d.endpointId);
      expect(byId.get(d.id)?.eventId).toBe(d.eventId);
    }
    // The deleted endpoint's deliveries are dead, never pending; the others pending.
    for (const row of rows) {
      if (row.endpointId === gone) {
        expect(row.status).toBe("dead");
        expect(row.deadReason).toBe("endpoint_deleted");
      } else expect(row.status).toBe("pending");
    }
    // Heads (src/deliveries/heads.ts): per pending queue, exactly one, with its lowest sequence.
    const queues = new Map<string, DeliveryRow[]>();
    for (const row of rows.filter((r) => r.status === "pending")) {
      const key = `${row.endpointId} ${row.aggregate}`;
      queues.set(key, [...(queues.get(key) ?? []), row]);
    }
    expect(queues.size).toBe((ENDPOINTS - 1) * (AGGREGATES + 1));
    for (const queue of queues.values()) {
      const lowest = Math.min(...queue.map((r) => r.sequence));
      expect(queue.filter((r) => r.isHead === 1).map((r) => r.sequence)).toEqual([lowest]);
    }
    // The commit behind the fan-out got the aggregate's next sequence, after every one of it.
    const big0 = rows.filter((r) => r.aggregate === "big/0" && r.eventId !== named(behind)[0]?.eventId);
    expect(named(behind).length).toBe(ENDPOINTS);
    expect(behind.result.events[0]?.sequence).toBe(Math.max(...big0.map((r) => r.sequence)) + 1);
  });
});

describe("a delivery named by a deferred fan-out, before its expansion", () => {
  const database = suiteDatabase();
  test("is found (pending) and cancelled from the moment the commit answers; the expansion writes it dead and keeps its queue's head", async () => {
    const db = database();
    const endpointIds: string[] = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      const endpoint = await db.writer.write(
        createEndpoint(
          { url: `http://127.0.0.1:9/${i}`, eventTypes: [], description: null, sealedSecrets: "[]" },
          Date.now(),
        ),
      );
      endpointIds.push(endpoint.id);
    }
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      id: undefined,
      type: "fan.out",
      aggregate: `named/${i % 2}`,
      payload: "{}",
      deliverAfter: null,
      deliverBy: Date.now() + 3_600_000,
      endpoints: undefined,
    }));
    const outcome = await db.writer.write(
      commitOp({
        by: { tokenId: "tok_test", tokenName: "test" },
        records: [],
        events,
        idempotency: undefined,
        traceparent: undefined,
        conflictStatus: 409,
        maxDeliveries: 10_000,
        now: Date.now(),
      }),
    );
    expect(outcome.deferredDeliveries).toBe(EVENTS * ENDPOINTS);
    // The first event of named/0 to the first endpoint: the head of its queue once expanded.
    const first = outcome.result.events[0];
    const target = first?.deliveries.find((d) => d.endpointId === endpointIds[0]);
    if (!first || !target) throw new Error("the commit named no delivery");
    const seen = await db.driver.read(getDelivery(target.id));
    expect(seen).toMatchObject({
      id: target.id,
      endpointId: target.endpointId,
      eventId: first.id,
      status: "pending",
      attemptCount: 0,
      deadReason: null,
      aggregate: "named/0",
      sequence: first.sequence,
    });
    const now = Date.now();
    expect(await db.writer.write(cancelDelivery(target.id, now))).toEqual({ kind: "cancelled" });
    expect(await db.driver.read(getDelivery(target.id))).toMatchObject({
      status: "dead",
      deadReason: "cancelled",
    });
    expect(await db.writer.write(cancelDelivery(target.id, now))).toEqual({
      kind: "not_pending",
      status: "dead",
    });
    // Dead, but not a row yet: a replay is refused until the expansion writes it.
    expect(await db.writer.write(replayDelivery(target.id, now, now + 3_600_000))).toBe("not_expanded");

    for (;;) {
      const next = await db.writer.write(expandFanOuts(EXPAND_CHUNK, Date.now()));
      if (!next.more) break;
    }
    const rows = await db.driver.read(
      all<{
        id: string;
        status: string;
        deadReason: string | null;
        deadAt: number | null;
        isHead: number;
        sequence: number;
      }>(
        `SELECT id, status, dead_reason AS deadReason, dead_at AS deadAt, is_head AS isHead, sequence FROM deliveries
         WHERE endpoint_id = :endpointId AND aggregate = 'named/0' ORDER BY sequence`,
        { endpointId: endpointIds[0] as string },
      ),
    );
    expect(rows[0]).toMatchObject({
      id: target.id,
      status: "dead",
      deadReason: "cancelled",
      deadAt: now,
    });
    // The queue goes on from the next event: it is the head, every other one waits.
    expect(rows.slice(1).map((r) => [r.status, r.isHead])).toEqual(
      rows.slice(1).map((_, i) => ["pending", i === 0 ? 1 : 0]),
    );
    const pending = await db.driver.read(
      get<{ n: number }>("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'"),
    );
    expect(pending?.n).toBe(EVENTS * ENDPOINTS - 1);
    expect(await db.writer.write(replayDelivery(target.id, now + 1, now + 3_600_000))).toBe("replayed");
  });
});

describe("deferred fan-out across a crash", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function start(
    dir: string,
    env: Record<string, string> = {},
  ): Promise<{ child: Child; url: string }> {
    const child = startChild([process.execPath, "src/main.ts", "serve"], {
      PORT: "0",
      OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
      OUTBOXD_ADMIN_TOKEN: TOKEN,
      OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
      OUTBOXD_LOG_LEVEL: "info",
      OUTBOXD_MAX_EVENTS_PER_COMMIT: String(EVENTS),
      ...env,
    });
    cleanup.push(async () => {
      child.kill("SIGKILL");
      await child.exited;
    });
    return { child, url: await child.listening() };
  }
  const TOKEN = `fan-out-admin-${crypto.randomUUID()}`;

  test("killed right after the commit, before any expansion: the restarted process expands it and every delivery arrives once per endpoint", async () => {
    const dir = tempDir("outboxd-fan-out-");
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const receivers: TestReceiver[] = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      const receiver = startReceiver();
      receivers.push(receiver);
      cleanup.push(() => receiver.stop());
    }
    // Killed right after the commit, or (if it comes first) when the once-a-second check finds the
    // committed fan-out while the commit's fsync is still under way: either way before any expansion.
    const first = await start(dir, {
      OUTBOXD_FAILPOINTS: "commit.after_commit,fan_out.before_expand",
      OUTBOXD_ALLOW_FAILPOINTS: "1",
    });
    const api = apiClient(first.url, TOKEN);
    for (const receiver of receivers) {
      expect((await api("POST", "/v1/endpoints", { url: receiver.url })).status).toBe(201);
    }
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      type: "fan.out",
      aggregate: `crash/${i % AGGREGATES}`,
      payload: { i },
    }));
    await expect(api("POST", "/v1/commits", { events })).rejects.toThrow();
    await first.child.exited;
    expect(first.child.proc.signalCode).toBe("SIGKILL");

    // Committed, not expanded: the events and their compact fan-out, no delivery yet.
    const file = new Database(join(dir, "outboxd.db"));
    try {
      const count = (sql: string) => (file.prepare(sql).get() as { n: number }).n;
      expect(count("SELECT count(*) AS n FROM events")).toBe(EVENTS);
      expect(count("SELECT count(*) AS n FROM fan_outs")).toBe(EVENTS);
      expect(count("SELECT coalesce(sum(done), 0) AS n FROM fan_outs")).toBe(0);
      expect(count("SELECT count(*) AS n FROM deliveries")).toBe(0);
    } finally {
      file.close();
    }

    const second = await start(dir);
    for (const receiver of receivers) {
      await waitFor(
        "every event at every receiver",
        () => new Set(receiver.received.map((r) => JSON.parse(r.body).id)).size === EVENTS,
        60_000,
      );
      // Order per aggregate at each receiver (DESIGN §1.3): sequences arrive increasing.
      const last = new Map<string, number>();
      for (const r of receiver.received) {
        const body = JSON.parse(r.body) as { aggregate: string; sequence: number };
        expect(body.sequence).toBeGreaterThanOrEqual(last.get(body.aggregate) ?? 0);
        last.set(body.aggregate, body.sequence);
      }
    }
    const stats = await apiClient(second.url, TOKEN)("GET", "/v1/stats");
    expect(stats.body.pending).toBe(0);
  }, 120_000);
});
