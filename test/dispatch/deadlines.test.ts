// Deadlines and the dead-letter queue (DESIGN §1.5, §2, §3 deliveries and replay): a delivery
// not acknowledged by deliver_by goes dead with deadline_exceeded, is counted, listed, keeps
// its attempts, and can be replayed one by one or in bulk; deleting an endpoint dead-letters
// its pending deliveries; a dead event no longer holds back its aggregate.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AttemptEvent } from "../../src/dispatch/dispatcher.ts";
import {
  type CommittedEvent,
  commitEvents,
  deliveryRow,
  exec,
  expectStatus,
  gate,
  ok,
  onlyDelivery,
  type Rig,
  requestsFor,
  sql,
  startRig,
  waitForRow,
  waitUntil,
} from "./harness.ts";

describe("deadlines and the dead-letter queue", () => {
  let rig: Rig;
  /** Event ids the receiver refuses (500) for now. */
  const failing = new Set<string>();
  /** How many times the receiver accepted (2xx) each event id. */
  const accepted = new Map<string, number>();
  beforeAll(async () => {
    rig = await startRig({ OUTBOXD_RETRY_BASE: "50ms", OUTBOXD_RETRY_CAP: "200ms" }, (request) => {
      const id = request.headers.get("webhook-id") as string;
      if (failing.has(id)) return new Response("nope", { status: 500 });
      accepted.set(id, (accepted.get(id) ?? 0) + 1);
      return ok();
    });
  });
  afterAll(async () => {
    await rig.stop();
  });

  const stats = async () => expectStatus(await rig.server.request("GET", "/v1/stats"), 200);
  const successes = (eventId: string) => accepted.get(eventId) ?? 0;

  let dead: CommittedEvent[] = [];
  let after: CommittedEvent | undefined;

  test("never acknowledged within deliverWithin: dead with deadline_exceeded, and the aggregate moves on", async () => {
    // Two events that the receiver refuses, with a 1 s window, then one it accepts.
    const refused = [crypto.randomUUID(), crypto.randomUUID()];
    for (const id of refused) failing.add(id);
    dead = await commitEvents(
      rig.server,
      refused.map((id, n) => ({ id, aggregate: "dl/1", deliverWithin: "1s", payload: { n } })),
    );
    [after] = await commitEvents(rig.server, [{ aggregate: "dl/1", payload: { n: 3 } }]);
    const [first, second] = dead.map(onlyDelivery) as [string, string];

    const rows = [];
    for (const id of [first, second]) {
      rows.push(await waitForRow(rig.server, id, "dead", (r) => r.status === "dead", 10_000));
    }
    for (const row of rows) {
      expect(row.dead_reason).toBe("deadline_exceeded");
      expect(row.lease_owner).toBeNull();
    }
    const firstRow = rows[0];
    expect(firstRow?.attempt_count).toBeGreaterThanOrEqual(1);
    expect(firstRow?.last_status_code).toBe(500);

    // Later events of the aggregate are no longer held back.
    const afterRow = await waitForRow(
      rig.server,
      onlyDelivery(after),
      "delivered",
      (r) => r.status === "delivered",
    );
    const deadAt = await deadAtOf([first, second]);
    expect(afterRow.delivered_at).toBeGreaterThanOrEqual(Math.max(...deadAt));
    expect(successes(after?.id as string)).toBe(1);
  }, 20_000);

  test("dead deliveries are counted in /v1/stats, listed by status and reason, and keep their attempts", async () => {
    const ids = dead.map(onlyDelivery);
    const s = await stats();
    expect(s.dead).toBe(2);
    expect(s.deadlineExceededTotal).toBe(2);
    expect(s.pending).toBe(0);
    expect(s.endpoints.find((e: { id: string }) => e.id === rig.endpointId)).toMatchObject({
      dead: 2,
      deadlineExceededTotal: 2,
    });

    const listed = expectStatus(
      await rig.server.request("GET", "/v1/deliveries?status=dead&reason=deadline_exceeded"),
      200,
    );
    expect(listed.data.map((d: { id: string }) => d.id).sort()).toEqual([...ids].sort());
    for (const delivery of listed.data) {
      expect(delivery).toMatchObject({ status: "dead", deadReason: "deadline_exceeded", aggregate: "dl/1" });
    }
    const other = expectStatus(
      await rig.server.request("GET", "/v1/deliveries?status=dead&reason=endpoint_deleted"),
      200,
    );
    expect(other.data).toEqual([]);

    const one = expectStatus(await rig.server.request("GET", `/v1/deliveries/${ids[0]}`), 200);
    expect(one).toMatchObject({
      id: ids[0],
      status: "dead",
      deadReason: "deadline_exceeded",
      lastStatusCode: 500,
    });
    const attempts = expectStatus(await rig.server.request("GET", `/v1/deliveries/${ids[0]}/attempts`), 200);
    expect(attempts.length).toBe(one.attemptCount);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ statusCode: 500, error: null, responsePrefix: "nope" });
      expect(typeof attempt.durationMs).toBe("number");
      expect(new Date(attempt.at).toISOString()).toBe(attempt.at);
    }
  });

  test("replay of one dead delivery (receiver fixed) delivers it exactly once; replaying what is not dead is 409", async () => {
    const [event] = dead;
    const id = onlyDelivery(event);
    failing.delete(event?.id as string);
    const replayed = expectStatus(
      await rig.server.request("POST", `/v1/deliveries/${id}/replay`, { deliverWithin: "1h" }),
      200,
    );
    expect(replayed).toMatchObject({ id, status: "pending", attemptCount: 0, deadReason: null });
    const row = await waitForRow(rig.server, id, "delivered", (r) => r.status === "delivered");
    expect(row.attempt_count).toBe(1);
    expect(successes(event?.id as string)).toBe(1);

    const again = await rig.server.request("POST", `/v1/deliveries/${id}/replay`);
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toStartWith("application/problem+json");
    expect((await rig.server.request("POST", "/v1/deliveries/dlv_nope/replay")).status).toBe(404);

    const s = await stats();
    expect(s.dead).toBe(1);
    // The total counts every deadline ever exceeded, replayed ones included.
    expect(s.deadlineExceededTotal).toBe(2);
  });

  test('bulk replay {"status":"dead"} answers {"replayed": n} and delivers them', async () => {
    const [, event] = dead;
    failing.delete(event?.id as string);
    const body = expectStatus(
      await rig.server.request("POST", "/v1/deliveries/replay", { status: "dead" }),
      200,
    );
    expect(body).toEqual({ replayed: 1 });
    await waitForRow(rig.server, onlyDelivery(event), "delivered", (r) => r.status === "delivered");
    expect(successes(event?.id as string)).toBe(1);
    expect(
      expectStatus(await rig.server.request("POST", "/v1/deliveries/replay", { status: "dead" }), 200),
    ).toEqual({
      replayed: 0,
    });
    expect((await rig.server.request("POST", "/v1/deliveries/replay", { status: "pending" })).status).toBe(
      422,
    );
    expect((await stats()).dead).toBe(0);
  });

  test("a deadline passing while a send is in flight: the failed answer makes it dead at once", async () => {
    const held = gate();
    const eventId = crypto.randomUUID();
    failing.add(eventId);
    const outcomes: AttemptEvent[] = [];
    const listen = (a: AttemptEvent) => outcomes.push(a);
    rig.server.outboxd.dispatcher?.on("attempt", listen);
    const previous = rig.receiver.respond;
    rig.receiver.respond = async (request, index) => {
      if (request.headers.get("webhook-id") === eventId) await held.promise;
      return previous(request, index);
    };
    try {
      const [event] = await commitEvents(rig.server, [
        { id: eventId, aggregate: "dl/inflight", deliverWithin: "300ms" },
      ]);
      const id = onlyDelivery(event);
      await waitUntil("the request in flight", () => requestsFor(rig.receiver, eventId).length === 1);
      const deliverBy = Date.parse(event?.deliverBy as string);
      await waitUntil("the deadline to pass", () => Date.now() > deliverBy);
      held.open();
      const attempt = await waitUntil("the attempt's outcome", () =>
        outcomes.find((a) => a.deliveryId === id),
      );
      expect(attempt).toMatchObject({ outcome: "dead", statusCode: 500, recorded: true });
      const row = await deliveryRow(rig.server, id);
      expect(row).toMatchObject({
        status: "dead",
        dead_reason: "deadline_exceeded",
        attempt_count: 1,
        last_status_code: 500,
      });
    } finally {
      held.open();
      rig.receiver.respond = previous;
      rig.server.outboxd.dispatcher?.off("attempt", listen);
    }
  });

  test("a deadline passing between attempts: the sweep moves it to dead", async () => {
    const eventId = crypto.randomUUID();
    failing.add(eventId);
    const [event] = await commitEvents(rig.server, [{ id: eventId, aggregate: "dl/between" }]);
    const id = onlyDelivery(event);
    await waitForRow(
      rig.server,
      id,
      "a failed attempt",
      (r) => r.attempt_count >= 1 && r.lease_owner === null,
    );
    // Far-off retry and deadline in the past, so only the sweep can settle it. Retries come every
    // 50-200 ms here: the row may be leased again for its next (failing) attempt by now, so it is
    // backdated between two attempts, whenever it is not leased.
    await waitUntil("the row unleased, to backdate it", async () => {
      const changed = await exec(
        rig.server,
        `UPDATE deliveries SET deliver_by = :past, next_attempt_at = :later
         WHERE id = :id AND lease_owner IS NULL`,
        { id, past: Date.now() - 1, later: Date.now() + 3_600_000 },
      );
      return changed === 1;
    });
    await rig.server.outboxd.dispatcher?.sweep();
    const row = await deliveryRow(rig.server, id);
    expect(row).toMatchObject({ status: "dead", dead_reason: "deadline_exceeded" });
  });

  test("one sweep dead-letters every expired delivery, not just the first thousand", async () => {
    const created = expectStatus(
      await rig.server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/paused" }),
      201,
    );
    // Disabled, so nothing is sent while the backlog builds up.
    expectStatus(await rig.server.request("PATCH", `/v1/endpoints/${created.id}`, { disabled: true }), 200);
    const COUNT = 2_500;
    for (let i = 0; i < COUNT; i += 100) {
      await commitEvents(
        rig.server,
        Array.from({ length: 100 }, (_, j) => ({ aggregate: `backlog/${i + j}`, endpoints: [created.id] })),
      );
    }
    // Read before the deadlines pass: the scheduled sweep may expire a chunk of them before the
    // explicit one below, and those count too.
    const before = (await stats()).deadlineExceededTotal;
    await exec(rig.server, "UPDATE deliveries SET deliver_by = :past WHERE endpoint_id = :id", {
      id: created.id,
      past: Date.now() - 1,
    });
    await rig.server.outboxd.dispatcher?.sweep();
    const [left] = await sql<{ n: number }>(
      rig.server,
      "SELECT count(*) AS n FROM deliveries WHERE endpoint_id = :id AND status = 'pending'",
      { id: created.id },
    );
    expect(left?.n).toBe(0);
    expect((await stats()).deadlineExceededTotal).toBe(before + COUNT);
  }, 20_000);

  test("deleting an endpoint dead-letters its pending deliveries with endpoint_deleted; they cannot be replayed", async () => {
    const created = expectStatus(
      await rig.server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/closed" }),
      201,
    );
    const events = await commitEvents(rig.server, [
      { aggregate: "del/1", endpoints: [created.id] },
      { aggregate: "del/1", endpoints: [created.id] },
      { aggregate: "del/2", endpoints: [created.id] },
    ]);
    const deleted = expectStatus(await rig.server.request("DELETE", `/v1/endpoints/${created.id}`), 200);
    expect(deleted).toMatchObject({ id: created.id, deleted: true, deadLettered: 3 });
    for (const event of events) {
      expect(await deliveryRow(rig.server, onlyDelivery(event))).toMatchObject({
        status: "dead",
        dead_reason: "endpoint_deleted",
        lease_owner: null,
      });
    }
    const listed = expectStatus(
      await rig.server.request(
        "GET",
        `/v1/deliveries?status=dead&reason=endpoint_deleted&endpoint=${created.id}`,
      ),
      200,
    );
    expect(listed.data).toHaveLength(3);
    expect(
      (await rig.server.request("POST", `/v1/deliveries/${onlyDelivery(events[0])}/replay`)).status,
    ).toBe(409);
    const bulk = expectStatus(
      await rig.server.request("POST", "/v1/deliveries/replay", { status: "dead", endpoint: created.id }),
      200,
    );
    expect(bulk).toEqual({ replayed: 0 });
  });

  async function deadAtOf(ids: string[]): Promise<number[]> {
    const rows = await sql<{ deadAt: number }>(
      rig.server,
      "SELECT dead_at AS deadAt FROM deliveries WHERE id IN (SELECT value FROM json_each(:ids))",
      { ids: JSON.stringify(ids) },
    );
    expect(rows).toHaveLength(ids.length);
    return rows.map((r) => r.deadAt);
  }
});

describe("the last attempt before a deadline", () => {
  let rig: Rig;
  beforeAll(async () => {
    // Backoff after a first failure: 5 to 10 s, longer than the 3 s window below.
    rig = await startRig({ OUTBOXD_RETRY_BASE: "10s" }, () => new Response("down", { status: 500 }));
  });
  afterAll(async () => {
    await rig.stop();
  });

  test("when the backoff would pass the deadline, one more attempt is made shortly before it", async () => {
    const [event] = await commitEvents(rig.server, [{ aggregate: "last/1", deliverWithin: "3s" }]);
    const id = onlyDelivery(event);
    const row = await waitForRow(rig.server, id, "dead", (r) => r.status === "dead", 10_000);
    expect(row.dead_reason).toBe("deadline_exceeded");
    const deliverBy = Date.parse(event?.deliverBy as string);
    const arrivals = requestsFor(rig.receiver, event?.id as string).map((r) => r.at);
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]).toBeLessThan(deliverBy);
    expect(arrivals[1]).toBeGreaterThan(deliverBy - 2_000);
  }, 15_000);
});
