// Order per aggregate under failures (DESIGN §1.3): with a receiver that fails about 30% of
// requests, every event arrives, the first successful arrivals of each aggregate are in
// sequence order, and sequence k+1 is never even attempted before k was acknowledged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Received } from "../helpers/receiver.ts";
import { commitEvents, fate, ok, type Rig, sql, startRig, waitUntil } from "./harness.ts";

const AGGREGATES = 20;
const EVENTS_PER_AGGREGATE = 15;
const SEED = 20261129;

/** Watches a receiver: per aggregate, the attempts in arrival order and what was acknowledged. */
class OrderWatch {
  readonly acknowledged = new Map<string, number>();
  readonly firstSuccesses = new Map<string, number[]>();
  readonly violations: string[] = [];
  readonly duplicates: string[] = [];
  readonly seen = new Set<string>();
  failures = 0;

  /** Called for each request before answering; returns the answer. */
  answer(request: Received, failRate: number, failFor?: (aggregate: string) => boolean): Response {
    const aggregate = request.headers.get("outbox-aggregate") as string;
    const sequence = Number(request.headers.get("outbox-sequence"));
    const id = request.headers.get("webhook-id") as string;
    const acked = this.acknowledged.get(aggregate) ?? 0;
    if (sequence > acked + 1) {
      this.violations.push(`${aggregate}: ${sequence} attempted while ${acked + 1} was not acknowledged`);
    }
    const attempt = request.headers.get("outbox-attempt") as string;
    const fail = failFor?.(aggregate) || fate(SEED, `${id}#${attempt}`) < failRate;
    if (fail) {
      this.failures += 1;
      return new Response("random failure", { status: 500 });
    }
    if (this.seen.has(id)) {
      this.duplicates.push(id);
    } else {
      this.seen.add(id);
      const list = this.firstSuccesses.get(aggregate) ?? [];
      list.push(sequence);
      this.firstSuccesses.set(aggregate, list);
    }
    this.acknowledged.set(aggregate, Math.max(acked, sequence));
    return ok();
  }
}

describe("order per aggregate", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({
      OUTBOXD_RETRY_BASE: "50ms",
      OUTBOXD_RETRY_CAP: "200ms",
      OUTBOXD_ENDPOINT_CONCURRENCY: "16",
    });
  });
  afterAll(async () => {
    await rig.stop();
  });

  test(`${AGGREGATES} aggregates x ${EVENTS_PER_AGGREGATE} events through a receiver failing ~30%: all arrive, in order, never attempted early`, async () => {
    const watch = new OrderWatch();
    rig.receiver.respond = (request) => watch.answer(request, 0.3);
    const aggregates = Array.from({ length: AGGREGATES }, (_, i) => `order/${i}`);
    // Round-robin commits while the dispatcher is already delivering the earlier ones.
    for (let round = 0; round < EVENTS_PER_AGGREGATE; round++) {
      await commitEvents(
        rig.server,
        aggregates.map((aggregate) => ({ aggregate, payload: { round } })),
      );
    }
    const total = AGGREGATES * EVENTS_PER_AGGREGATE;
    await waitUntil(`all ${total} events acknowledged`, () => watch.seen.size === total, 45_000);

    expect(watch.violations).toEqual([]);
    expect(watch.duplicates).toEqual([]);
    const inOrder = Array.from({ length: EVENTS_PER_AGGREGATE }, (_, i) => i + 1);
    for (const aggregate of aggregates) expect(watch.firstSuccesses.get(aggregate)).toEqual(inOrder);
    // The receiver really did fail a good share of the time, so retries were exercised.
    expect(watch.failures).toBeGreaterThan(total * 0.2);

    // The last answers may still be on their way into the database.
    await waitUntil(`all ${total} deliveries marked delivered`, async () => {
      const [counts] = await sql<{ delivered: number; other: number }>(
        rig.server,
        `SELECT sum(status = 'delivered') AS delivered, sum(status <> 'delivered') AS other FROM deliveries
         WHERE aggregate LIKE 'order/%'`,
      );
      return counts?.delivered === total && counts.other === 0;
    });
  }, 60_000);

  test("an aggregate whose head keeps failing blocks only itself: the others are all delivered", async () => {
    const watch = new OrderWatch();
    rig.receiver.respond = (request) => watch.answer(request, 0, (aggregate) => aggregate === "stuck/1");
    const events = [];
    for (let i = 0; i < 3; i++) {
      events.push(
        ...(await commitEvents(rig.server, [
          { aggregate: "stuck/1" },
          { aggregate: "free/1" },
          { aggregate: "free/2" },
        ])),
      );
    }
    await waitUntil("both free aggregates delivered", () => watch.seen.size === 6);
    // And the stuck head has been retried meanwhile (its retries are short), never its successors.
    await waitUntil("the stuck head retried", () => watch.failures >= 3);
    expect(watch.firstSuccesses.get("free/1")).toEqual([1, 2, 3]);
    expect(watch.firstSuccesses.get("free/2")).toEqual([1, 2, 3]);
    expect(watch.violations).toEqual([]);
    const stuck = await sql<{ sequence: number; status: string; attempt_count: number }>(
      rig.server,
      "SELECT sequence, status, attempt_count FROM deliveries WHERE aggregate = 'stuck/1' ORDER BY sequence",
    );
    expect(stuck.map((d) => d.status)).toEqual(["pending", "pending", "pending"]);
    expect(stuck[0]?.attempt_count).toBeGreaterThanOrEqual(3);
    expect(stuck.slice(1).map((d) => d.attempt_count)).toEqual([0, 0]);
    expect(events).toHaveLength(9);
  });
});
