// What the dispatcher does with each kind of receiver answer (DESIGN §4 "Receiver answers", §2
// state machine): Retry-After, 410, timeouts, refused connections, redirects, slow receivers,
// and a late 2xx after the lease was taken over. Retries are made due by moving
// next_attempt_at to now, never by waiting out a backoff.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AttemptEvent } from "../../src/dispatch/dispatcher.ts";
import { CLAIM_AHEAD, FIRST_AHEAD } from "../../src/dispatch/slots.ts";
import { type Received, startReceiver, type TestReceiver } from "../helpers/receiver.ts";
import { startServer } from "../helpers/server.ts";
import {
  commitEvents,
  deliveryRow,
  exec,
  expectStatus,
  gate,
  ok,
  onlyDelivery,
  type Rig,
  requestsFor,
  retryNow,
  sql,
  startRig,
  waitForRow,
  waitUntil,
} from "./harness.ts";

/** A receiver of this suite, with an endpoint of its own. */
async function endpointFor(rig: Rig, respond: TestReceiver["respond"]) {
  const receiver = startReceiver(respond);
  receivers.push(receiver);
  const created = expectStatus(await rig.server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
  return { receiver, endpointId: created.id as string };
}
const receivers: TestReceiver[] = [];

/** Commits one event addressed only to `endpointId`; returns its event and delivery ids. */
async function send(rig: Rig, endpointId: string, aggregate: string) {
  const [event] = await commitEvents(rig.server, [{ aggregate, endpoints: [endpointId] }]);
  return { eventId: event?.id as string, deliveryId: onlyDelivery(event) };
}

async function attempts(rig: Rig, deliveryId: string) {
  return expectStatus(await rig.server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200) as {
    at: string;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responsePrefix: string | null;
  }[];
}

describe("receiver answers (send timeout 500ms, lease 2s)", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({ OUTBOXD_SEND_TIMEOUT: "500ms", OUTBOXD_LEASE: "2s" });
  });
  afterAll(async () => {
    await rig.stop();
    for (const receiver of receivers.splice(0)) await receiver.stop();
  });

  test("429 with Retry-After in seconds: the next attempt is not scheduled before it", async () => {
    const { receiver, endpointId } = await endpointFor(
      rig,
      (_, i) => new Response("slow down", { status: i === 0 ? 429 : 200, headers: { "retry-after": "30" } }),
    );
    const { deliveryId } = await send(rig, endpointId, "ra/seconds");
    const row = await waitForRow(
      rig.server,
      deliveryId,
      "the 429 recorded",
      (r) => r.last_status_code === 429,
    );
    const answeredAt = receiver.received[0]?.at as number;
    expect(row.status).toBe("pending");
    expect(row.lease_owner).toBeNull();
    expect(row.next_attempt_at).toBeGreaterThanOrEqual(answeredAt + 30_000);
    // Honoured, not exceeded by much: the default backoff (5 s base) is below 30 s.
    expect(row.next_attempt_at).toBeLessThanOrEqual(Date.now() + 30_000);

    await retryNow(rig.server, deliveryId);
    await waitForRow(rig.server, deliveryId, "delivered", (r) => r.status === "delivered");
    expect(receiver.received).toHaveLength(2);
  });

  test("503 with Retry-After as an HTTP-date: the next attempt is not before that date", async () => {
    let retryAt = 0;
    const { receiver, endpointId } = await endpointFor(rig, () => {
      retryAt = (Math.floor(Date.now() / 1000) + 40) * 1000;
      return new Response("maintenance", {
        status: 503,
        headers: { "retry-after": new Date(retryAt).toUTCString() },
      });
    });
    const { deliveryId } = await send(rig, endpointId, "ra/date");
    const row = await waitForRow(
      rig.server,
      deliveryId,
      "the 503 recorded",
      (r) => r.last_status_code === 503,
    );
    expect(receiver.received).toHaveLength(1);
    expect(row.status).toBe("pending");
    expect(row.next_attempt_at).toBeGreaterThanOrEqual(retryAt);
    expect(row.next_attempt_at).toBeLessThanOrEqual(retryAt + 1_000);
  });

  test("Retry-After: 0 does not make a failing receiver hammered without backoff", async () => {
    const { receiver, endpointId } = await endpointFor(
      rig,
      () => new Response("busy", { status: 503, headers: { "retry-after": "0" } }),
    );
    const { deliveryId } = await send(rig, endpointId, "ra/zero");
    const row = await waitForRow(
      rig.server,
      deliveryId,
      "the 503 recorded",
      (r) => r.last_status_code === 503,
    );
    // The default backoff after a first failure is at least half of 5 s.
    expect(row.next_attempt_at).toBeGreaterThanOrEqual((receiver.received[0]?.at as number) + 2_500);
  });

  test("410 disables the endpoint with a reason; its deliveries stay pending and nothing more is sent until enable", async () => {
    let gone = true;
    const { receiver, endpointId } = await endpointFor(rig, () =>
      gone ? new Response("gone", { status: 410 }) : ok(),
    );
    const events = await commitEvents(rig.server, [
      { aggregate: "gone/1", endpoints: [endpointId] },
      { aggregate: "gone/1", endpoints: [endpointId] },
      { aggregate: "gone/2", endpoints: [endpointId] },
    ]);
    const ids = events.map(onlyDelivery);
    await waitForRow(rig.server, ids[0] as string, "the 410 recorded", (r) => r.last_status_code === 410);
    const endpoint = expectStatus(await rig.server.request("GET", `/v1/endpoints/${endpointId}`), 200);
    expect(endpoint.disabled).toBe(true);
    expect(endpoint.disabledReason).toBe("gone");
    expect(endpoint.disabledDetail).toContain("410");
    expect(endpoint.pending).toBe(3);

    // Make everything of that endpoint due, sweep, and use a delivery to another endpoint as a
    // barrier: claims take due rows oldest first, so once the witness is delivered any claim
    // that could have taken the disabled endpoint's rows has happened.
    const sentBefore = receiver.received.length;
    await exec(rig.server, "UPDATE deliveries SET next_attempt_at = :now WHERE endpoint_id = :id", {
      id: endpointId,
      now: Date.now() - 1_000,
    });
    await rig.server.outboxd.dispatcher?.sweep();
    const witness = await send(rig, rig.endpointId, "gone/witness");
    await waitForRow(
      rig.server,
      witness.deliveryId,
      "the witness delivered",
      (r) => r.status === "delivered",
    );
    expect(receiver.received.length).toBe(sentBefore);
    for (const id of ids) {
      const row = await deliveryRow(rig.server, id);
      expect(row.status).toBe("pending");
      expect(row.lease_owner).toBeNull();
    }

    gone = false;
    const enabled = expectStatus(await rig.server.request("POST", `/v1/endpoints/${endpointId}/enable`), 200);
    expect(enabled).toMatchObject({ disabled: false, disabledReason: null });
    for (const id of ids)
      await waitForRow(rig.server, id, "delivered after enable", (r) => r.status === "delivered");
    const sequences = (aggregate: string) =>
      receiver.received
        .slice(sentBefore)
        .filter((r) => r.headers.get("outbox-aggregate") === aggregate)
        .map((r) => Number(r.headers.get("outbox-sequence")));
    expect(sequences("gone/1")).toEqual([1, 2]);
    expect(sequences("gone/2")).toEqual([1]);
  });

  test("a receiver that never answers times out (500ms), the lease is released, and the delivery is retried", async () => {
    const hung = gate();
    let hang = true;
    const { receiver, endpointId } = await endpointFor(rig, async () => {
      if (!hang) return ok();
      await hung.promise;
      return ok();
    });
    try {
      const { deliveryId, eventId } = await send(rig, endpointId, "hang/1");
      const row = await waitForRow(
        rig.server,
        deliveryId,
        "the timeout recorded",
        (r) => r.last_error !== null,
      );
      expect(row.status).toBe("pending");
      expect(row.last_error).toContain("timeout");
      expect(row.last_status_code).toBeNull();
      expect(row.lease_owner).toBeNull();
      expect(row.attempt_count).toBe(1);
      const [first] = await attempts(rig, deliveryId);
      expect(first?.statusCode).toBeNull();
      expect(first?.durationMs).toBeGreaterThanOrEqual(450);
      expect(first?.durationMs).toBeLessThan(1_900);

      hang = false;
      await retryNow(rig.server, deliveryId);
      await waitForRow(rig.server, deliveryId, "delivered", (r) => r.status === "delivered");
      expect(requestsFor(receiver, eventId).map((r) => r.headers.get("outbox-attempt"))).toEqual(["1", "2"]);
      expect((await attempts(rig, deliveryId)).map((a) => a.statusCode)).toEqual([null, 200]);
    } finally {
      hung.open();
    }
  });

  test("connection refused is an error that is retried, and goes through once the URL works", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => ok() });
    const url = `http://127.0.0.1:${closed.port}/hook`;
    await closed.stop(true);
    const created = expectStatus(await rig.server.request("POST", "/v1/endpoints", { url }), 201);
    const { deliveryId } = await send(rig, created.id, "refused/1");
    const row = await waitForRow(rig.server, deliveryId, "the error recorded", (r) => r.last_error !== null);
    expect(row.status).toBe("pending");
    expect(row.last_status_code).toBeNull();
    expect(row.next_attempt_at).toBeGreaterThan(Date.now());

    await retryNow(rig.server, deliveryId);
    await waitForRow(
      rig.server,
      deliveryId,
      "a second failed attempt",
      (r) => r.attempt_count === 2 && !r.lease_owner,
    );
    expect(await attempts(rig, deliveryId)).toHaveLength(2);

    const { receiver } = await endpointFor(rig, ok);
    expectStatus(
      await rig.server.request("PATCH", `/v1/endpoints/${created.id}`, { url: receiver.url }),
      200,
    );
    await retryNow(rig.server, deliveryId);
    await waitForRow(rig.server, deliveryId, "delivered", (r) => r.status === "delivered");
    expect(receiver.received).toHaveLength(1);
  });

  test("secrets that cannot be opened (wrong master key) fail the attempt visibly instead of leaving it leased", async () => {
    const { receiver, endpointId } = await endpointFor(rig, ok);
    // What another OUTBOXD_MASTER_KEY's ciphertext looks like to this process.
    await exec(rig.server, "UPDATE endpoints SET secrets = :sealed WHERE id = :id", {
      id: endpointId,
      sealed: `aesgcm:${Buffer.alloc(48, 3).toString("base64")}`,
    });
    const { deliveryId } = await send(rig, endpointId, "sealed/1");
    const row = await waitForRow(
      rig.server,
      deliveryId,
      "the failure recorded",
      (r) => r.last_error !== null,
    );
    expect(row).toMatchObject({
      status: "pending",
      lease_owner: null,
      attempt_count: 1,
      last_status_code: null,
    });
    expect(row.last_error).toContain("secret");
    expect(row.next_attempt_at).toBeGreaterThan(Date.now());
    expect(await attempts(rig, deliveryId)).toHaveLength(1);
    expect(receiver.received).toHaveLength(0);
  });

  test("a 3xx is not followed: the Location is never requested and the attempt counts as failed", async () => {
    const { receiver: target } = await endpointFor(rig, ok);
    const { receiver, endpointId } = await endpointFor(
      rig,
      () => new Response(null, { status: 302, headers: { location: target.url } }),
    );
    const targetBefore = target.received.length;
    const { deliveryId } = await send(rig, endpointId, "redirect/1");
    const row = await waitForRow(
      rig.server,
      deliveryId,
      "the 302 recorded",
      (r) => r.last_status_code === 302,
    );
    expect(row.status).toBe("pending");
    expect(row.last_error).toContain("redirect");
    expect(receiver.received).toHaveLength(1);
    expect(target.received.length).toBe(targetBefore);
  });
});

describe("slow receivers and late answers (send timeout 15s, lease 60s)", () => {
  let rig: Rig;
  const attemptsSeen: AttemptEvent[] = [];
  beforeAll(async () => {
    rig = await startRig();
    rig.server.outboxd.dispatcher?.on("attempt", (a: AttemptEvent) => attemptsSeen.push(a));
  });
  afterAll(async () => {
    await rig.stop();
    for (const receiver of receivers.splice(0)) await receiver.stop();
  });

  test("a slow receiver keeps the delivery in flight (leased, counted) until it answers, then it is delivered once", async () => {
    const slow = gate();
    const { receiver, endpointId } = await endpointFor(rig, async () => {
      await slow.promise;
      return ok();
    });
    const { deliveryId } = await send(rig, endpointId, "slow/1");
    await waitUntil("the request to arrive", () => receiver.received.length === 1);
    const inFlight = await deliveryRow(rig.server, deliveryId);
    expect(inFlight.status).toBe("pending");
    expect(inFlight.lease_owner).not.toBeNull();
    expect(inFlight.lease_expires_at).toBeGreaterThan(Date.now());
    const stats = expectStatus(await rig.server.request("GET", "/v1/stats"), 200);
    expect(stats.endpoints.find((e: { id: string }) => e.id === endpointId)).toMatchObject({
      pending: 1,
      inFlight: 1,
      due: 0,
    });

    // A sweep meanwhile does not send it again.
    await rig.server.outboxd.dispatcher?.sweep();
    const heldFrom = receiver.received[0]?.at as number;
    await waitUntil("the receiver to have held the request 300 ms", () => Date.now() - heldFrom >= 300);
    slow.open();
    const row = await waitForRow(rig.server, deliveryId, "delivered", (r) => r.status === "delivered");
    expect(row.attempt_count).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const [attempt] = await attempts(rig, deliveryId);
    expect(attempt?.durationMs).toBeGreaterThanOrEqual(290);
  });

  test("a 2xx that arrives after the lease was taken over is refused: the row keeps the newer attempt's result", async () => {
    const late = gate();
    const { receiver, endpointId } = await endpointFor(rig, async (_: Received, i: number) => {
      if (i === 0) {
        await late.promise;
        return ok();
      }
      return new Response("newer attempt failed", { status: 500 });
    });
    const { deliveryId } = await send(rig, endpointId, "late/1");
    await waitUntil("the first request to arrive", () => receiver.received.length === 1);

    // The first lease runs out (backdated), so the delivery is claimed again and fails quickly.
    await exec(rig.server, "UPDATE deliveries SET lease_expires_at = :past WHERE id = :id", {
      id: deliveryId,
      past: Date.now() - 1,
    });
    rig.server.outboxd.dispatcher?.wake();
    const newer = await waitForRow(
      rig.server,
      deliveryId,
      "the newer 500 recorded",
      (r) => r.last_status_code === 500,
    );
    expect(newer.attempt_count).toBe(2);

    // Now the first request gets its 200: too late, the fence refuses it.
    late.open();
    const refused = await waitUntil("the late attempt", () =>
      attemptsSeen.find((a) => a.deliveryId === deliveryId && a.attempt === 1),
    );
    expect(refused).toMatchObject({ outcome: "delivered", statusCode: 200, recorded: false });
    const row = await deliveryRow(rig.server, deliveryId);
    expect(row.status).toBe("pending");
    expect(row.last_status_code).toBe(500);
    expect(row.next_attempt_at).toBe(newer.next_attempt_at);
    expect(row.delivered_at).toBeNull();
    // Both attempts are in the log, the late one included.
    expect((await attempts(rig, deliveryId)).map((a) => a.statusCode).sort()).toEqual([200, 500]);
  });
});

describe("concurrency limits (OUTBOXD_CONCURRENCY=4, OUTBOXD_ENDPOINT_CONCURRENCY=2)", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({ OUTBOXD_CONCURRENCY: "4", OUTBOXD_ENDPOINT_CONCURRENCY: "2" });
  });
  afterAll(async () => {
    await rig.stop();
    for (const receiver of receivers.splice(0)) await receiver.stop();
  });

  test("at most 2 requests in flight per endpoint and 4 in all, however much is due", async () => {
    let holding = true;
    const held: (() => void)[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const perEndpoint = new Map<string, { now: number; max: number }>();
    const counting = (name: string) => async () => {
      const mine = perEndpoint.get(name) ?? { now: 0, max: 0 };
      perEndpoint.set(name, mine);
      mine.now += 1;
      mine.max = Math.max(mine.max, mine.now);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // Held by the test at first, then briefly, so the dispatcher keeps refilling its slots.
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      else await new Promise((resolve) => setTimeout(resolve, 5));
      mine.now -= 1;
      inFlight -= 1;
      return ok();
    };
    const a = await endpointFor(rig, counting("a"));
    const b = await endpointFor(rig, counting("b"));
    const events = [];
    for (const { endpointId } of [a, b]) {
      events.push(
        ...(await commitEvents(
          rig.server,
          // More than an endpoint holds (2 in flight, CLAIM_AHEAD × 2 ahead), so some wait unclaimed.
          Array.from({ length: 4 + CLAIM_AHEAD * 2 }, (_, i) => ({
            aggregate: `limits/${endpointId}/${i}`,
            endpoints: [endpointId],
          })),
        )),
      );
    }
    await waitUntil("both endpoints at their limit", () => held.length === 4);
    // Claims run ahead (leased, waiting for a slot; before any answer, FIRST_AHEAD times the
    // endpoint's limit): two in flight and FIRST_AHEAD × 2 ahead per endpoint; yet nothing more
    // is sent, and a sweep with every slot taken claims and starts nothing more.
    const leased = async () =>
      (
        await sql<{ n: number }>(
          rig.server,
          "SELECT count(*) AS n FROM deliveries WHERE lease_owner IS NOT NULL",
        )
      )[0]?.n;
    const expected = 2 * (2 + FIRST_AHEAD * 2);
    await waitUntil("the next ones claimed ahead", async () => (await leased()) === expected);
    await rig.server.outboxd.dispatcher?.sweep();
    expect(await leased()).toBe(expected);
    expect(held.length).toBe(4);
    expect(rig.server.outboxd.dispatcher?.inFlight).toBe(4);

    holding = false;
    for (const release of held.splice(0)) release();
    for (const event of events) {
      await waitForRow(rig.server, onlyDelivery(event), "delivered", (r) => r.status === "delivered");
    }
    expect(perEndpoint.get("a")?.max).toBe(2);
    expect(perEndpoint.get("b")?.max).toBe(2);
    expect(maxInFlight).toBe(4);
  });
});

describe("private addresses (OUTBOXD_ALLOW_PRIVATE_ENDPOINTS off)", () => {
  test("a host that resolved to a public address at create but to a private one now is not sent to", async () => {
    let address = "93.184.216.34";
    const server = await startServer(
      { OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "0" },
      { resolver: async () => [address] },
    );
    try {
      const created = expectStatus(
        await server.request("POST", "/v1/endpoints", { url: "https://hooks.example.com/outboxd" }),
        201,
      );
      address = "127.0.0.1";
      const [event] = await commitEvents(server, [{ aggregate: "rebind/1", endpoints: [created.id] }]);
      const row = await waitForRow(
        server,
        onlyDelivery(event),
        "the refusal recorded",
        (r) => r.last_error !== null,
      );
      expect(row).toMatchObject({ status: "pending", last_status_code: null, lease_owner: null });
      expect(row.last_error).toContain("blocked");
      expect(row.last_error).toContain("private");
    } finally {
      await server.stop();
    }
  });
});
