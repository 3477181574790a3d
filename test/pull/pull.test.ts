// Pull endpoints (DESIGN §12) through the real HTTP API: poll, ack, nack, the lease lifecycle
// and the head-of-line rule, on a real database file with the dispatcher and its sweep running.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { EventToSend } from "../../src/dispatch/send-context.ts";
import { webhookBody } from "../../src/dispatch/sender.ts";
import {
  commitEvents,
  deliveryRow,
  exec,
  expectStatus,
  ok,
  onlyDelivery,
  sql,
  waitForRow,
  waitUntil,
} from "../dispatch/harness.ts";
import { apiClient } from "../helpers/api.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { createPullEndpoint, type Pulled, type PullRig, startPullRig } from "./helpers.ts";

describe("pull endpoints", () => {
  let rig: PullRig;
  beforeAll(async () => {
    // Short backoff so a nacked or lapsed delivery comes again within the test.
    rig = await startPullRig({ OUTBOXD_RETRY_BASE: "20ms", OUTBOXD_RETRY_CAP: "100ms" });
  });
  afterAll(async () => {
    await rig.stop();
  });

  test("a pull endpoint has kind pull, no url and no secret; webhook-only routes answer 409", async () => {
    const { server, endpointId } = rig;
    const endpoint = expectStatus(await server.request("GET", `/v1/endpoints/${endpointId}`), 200);
    expect(endpoint).toMatchObject({ kind: "pull", url: null, disabled: false });
    const created = expectStatus(await server.request("POST", "/v1/endpoints", { kind: "pull" }), 201);
    expect(created.secret).toBeUndefined();
    for (const [method, path] of [
      ["POST", "rotate-secret"],
      ["GET", "secret"],
      ["POST", "test"],
    ] as const) {
      const answer = await server.request(method, `/v1/endpoints/${endpointId}/${path}`);
      expect(answer.status).toBe(409);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
    }
    const patched = await server.request("PATCH", `/v1/endpoints/${endpointId}`, {
      url: "https://x.example",
    });
    expect(patched.status).toBe(422);
    expect(patched.body.errors[0].pointer).toBe("/url");
  });

  test("create refuses a url or secret with kind pull, and a webhook without url (422, pointer)", async () => {
    const { server } = rig;
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "pull", url: "https://x.example/hook" }, "/url"],
      [{ kind: "pull", secret: `whsec_${Buffer.alloc(24, 1).toString("base64")}` }, "/secret"],
      [{ kind: "webhook" }, "/url"],
      [{}, "/url"],
      [{ kind: "carrier-pigeon", url: "https://x.example" }, "/kind"],
    ];
    for (const [body, pointer] of cases) {
      const answer = await server.request("POST", "/v1/endpoints", body);
      expect(answer.status).toBe(422);
      expect(answer.body.errors[0].pointer).toBe(pointer);
    }
  });

  test("bad poll input, wrong kind, unknown endpoint and wrong scope are 4xx problems", async () => {
    const { server, consumer, endpointId } = rig;
    const poll = (body: unknown, id = endpointId) => consumer("POST", `/v1/endpoints/${id}/poll`, body);
    const invalid: [Record<string, unknown>, string][] = [
      [{ max: 0 }, "/max"],
      [{ max: 501 }, "/max"],
      [{ max: 1.5 }, "/max"],
      [{ wait: "61s" }, "/wait"],
      [{ wait: "soon" }, "/wait"],
      [{ lease: "999ms" }, "/lease"],
      [{ lease: "16m" }, "/lease"],
      [{ extra: 1 }, "/extra"],
    ];
    for (const [body, pointer] of invalid) {
      const answer = await poll(body);
      expect(answer.status).toBe(422);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.body.errors[0].pointer).toBe(pointer);
    }
    expect((await poll("{nope")).status).toBe(400);
    expect((await poll({}, "ep_unknown")).status).toBe(404);
    const receiver = startReceiver(ok);
    try {
      const webhook = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
      const answer = await poll({}, webhook.id);
      expect(answer.status).toBe(409);
      expect((await consumer("POST", `/v1/endpoints/${webhook.id}/ack`, { acks: [] })).status).toBe(409);
      expect((await consumer("GET", `/v1/endpoints/${webhook.id}/stream`)).status).toBe(409);
    } finally {
      await receiver.stop();
    }
    const badAck = await consumer("POST", `/v1/endpoints/${endpointId}/ack`, {
      nacks: [{ deliveryId: "dlv_x", leaseToken: "lt_x", retryAfter: "2d" }],
    });
    expect(badAck.status).toBe(422);
    expect(badAck.body.errors[0].pointer).toBe("/nacks/0/retryAfter");
    const badStream = await consumer("GET", `/v1/endpoints/${endpointId}/stream?max=0`);
    expect(badStream.status).toBe(422);
    // A read token may not consume; a consume token may not read the endpoint list.
    const reader = expectStatus(
      await server.request("POST", "/v1/tokens", { name: "r", scopes: ["read"] }),
      201,
    );
    expect(
      (await apiClient(server.url, reader.token)("POST", `/v1/endpoints/${endpointId}/poll`, {})).status,
    ).toBe(403);
    expect((await consumer("GET", "/v1/endpoints")).status).toBe(403);
  });

  test("a disabled pull endpoint answers polls with 409 and takes acks", async () => {
    const { server, consumer } = rig;
    const id = await createPullEndpoint(server);
    expectStatus(await server.request("PATCH", `/v1/endpoints/${id}`, { disabled: true }), 200);
    expect((await consumer("POST", `/v1/endpoints/${id}/poll`, {})).status).toBe(409);
    expect((await consumer("POST", `/v1/endpoints/${id}/ack`, { acks: [] })).status).toBe(200);
  });

  test("poll leases the §4 event with a lease token; ack marks it delivered; a repeated ack still counts", async () => {
    const { server, endpointId } = rig;
    const [event] = await commitEvents(server, [
      { type: "order.placed", aggregate: "orders/o-1", payload: { total: 12.5 }, endpoints: [endpointId] },
    ]);
    const deliveryId = onlyDelivery(event);
    const answer = await rig.poll({ max: 10 });
    expect(answer.data).toHaveLength(1);
    const [pulled] = answer.data as [Pulled];
    expect(pulled).toMatchObject({ deliveryId, attempt: 1 });
    expect(pulled.leaseToken).toMatch(/^lt_[0-9a-f]{32}$/);
    expect(pulled.event).toEqual({
      id: event?.id as string,
      type: "order.placed",
      timestamp: expect.any(String),
      aggregate: "orders/o-1",
      sequence: 1,
      previousSequence: null,
      data: { total: 12.5 },
    });
    expect(Date.parse(answer.leaseExpiresAt as string)).toBeGreaterThan(Date.now());
    // Leased: nobody else gets it.
    expect((await rig.poll()).data).toHaveLength(0);
    const ref = { deliveryId, leaseToken: pulled.leaseToken };
    expect(await rig.ack({ acks: [ref] })).toEqual({ acked: 1, nacked: 0, stale: [] });
    const row = await deliveryRow(server, deliveryId);
    expect(row.status).toBe("delivered");
    expect(row.lease_expires_at).toBeNull();
    // The answer of the first ack was lost, say: the same ack again is acked, not stale.
    expect(await rig.ack({ acks: [ref] })).toEqual({ acked: 1, nacked: 0, stale: [] });
    const attempts = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200);
    expect(attempts).toHaveLength(1);
    const delivery = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}`), 200);
    expect(delivery).toMatchObject({ status: "delivered", attemptCount: 1 });
  });

  test("the same delivery listed twice in one ack request counts as acked twice", async () => {
    const { server, endpointId } = rig;
    const [event] = await commitEvents(server, [
      { type: "order.placed", aggregate: "orders/o-twice", payload: {}, endpoints: [endpointId] },
    ]);
    const deliveryId = onlyDelivery(event);
    const [pulled] = (await rig.poll({ max: 10 })).data as [Pulled];
    expect(pulled.deliveryId).toBe(deliveryId);
    const ref = { deliveryId, leaseToken: pulled.leaseToken };
    expect(await rig.ack({ acks: [ref, ref] })).toEqual({ acked: 2, nacked: 0, stale: [] });
    expect((await deliveryRow(server, deliveryId)).status).toBe("delivered");
    const attempts = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200);
    expect(attempts).toHaveLength(1);
  });

  test("a pulled message's event is byte for byte the webhook body of the same event (made by SQLite, not by webhookBody)", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    // Awkward strings: quotes, backslashes, line separators, emoji (aggregates refuse control
    // characters), in the aggregate and the payload.
    const aggregate = 'odd/"q\\b \u2028\u2029 é 😀 </script>';
    const body = `{"events": [{"type": "s.odd", "aggregate": ${JSON.stringify(aggregate)}, "endpoints": ["${endpointId}"],
      "payload": {  "b": [1, 2.50, "x\\ny"],\n "a": {}  }}]}`;
    const committed = await rig.server.request("POST", "/v1/commits", body);
    expect(committed.body).toMatchObject({ events: [{ aggregate }] });
    const batch = await rig.server.outboxd.pull.lease(endpointId, 10, 60_000);
    expect(batch.data).toHaveLength(1);
    const [pulled] = batch.data as [{ deliveryId: string; leaseToken: string; json: string }];
    const [event] = await sql<EventToSend>(
      rig.server,
      `SELECT e.id, e.type, e.aggregate, e.sequence, e.payload, e.occurred_at AS occurredAt, e.traceparent
       FROM events e JOIN deliveries d ON d.event_id = e.id WHERE d.id = :id`,
      { id: pulled.deliveryId },
    );
    expect(event?.aggregate).toBe(aggregate);
    expect(pulled.json).toBe(
      `{"deliveryId":"${pulled.deliveryId}","leaseToken":"${pulled.leaseToken}","attempt":1,"event":${webhookBody({ ...(event as EventToSend), previousSequence: null, attempt: 1 })}}`,
    );
    expect(JSON.parse(pulled.json).event.data).toEqual({ b: [1, 2.5, "x\ny"], a: {} });
  });

  test("acks for unknown ids, other endpoints' deliveries and wrong tokens are stale and change nothing", async () => {
    const { server, endpointId } = rig;
    const other = await createPullEndpoint(server);
    const [mine, theirs] = await commitEvents(server, [
      { aggregate: "stale/a", endpoints: [endpointId] },
      { aggregate: "stale/b", endpoints: [other] },
    ]);
    const [leased] = (await rig.poll()).data as [Pulled];
    const [leasedOther] = (await rig.poll({}, other)).data as [Pulled];
    expect(leased.deliveryId).toBe(onlyDelivery(mine));
    const answer = await rig.ack({
      acks: [
        { deliveryId: "dlv_doesnotexist", leaseToken: leased.leaseToken },
        { deliveryId: leasedOther.deliveryId, leaseToken: leasedOther.leaseToken },
        { deliveryId: leased.deliveryId, leaseToken: "lt_wrong" },
      ],
      nacks: [{ deliveryId: leased.deliveryId, leaseToken: "lt_wrong" }],
    });
    expect(answer).toEqual({
      acked: 0,
      nacked: 0,
      stale: ["dlv_doesnotexist", leasedOther.deliveryId, leased.deliveryId, leased.deliveryId],
    });
    expect((await deliveryRow(server, onlyDelivery(theirs))).status).toBe("pending");
    expect((await deliveryRow(server, leased.deliveryId)).lease_owner).toBe(leased.leaseToken);
    await rig.ack({ acks: [{ deliveryId: leased.deliveryId, leaseToken: leased.leaseToken }] });
    await rig.ack(
      { acks: [{ deliveryId: leasedOther.deliveryId, leaseToken: leasedOther.leaseToken }] },
      other,
    );
  });

  test("the dispatcher never sends a pull endpoint's deliveries", async () => {
    const { server, endpointId } = rig;
    const receiver = startReceiver(ok);
    try {
      const webhook = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
      const [event] = await commitEvents(server, [
        { aggregate: "both/1", endpoints: [endpointId, webhook.id] },
      ]);
      const toWebhook = event?.deliveries.find((d) => d.endpointId === webhook.id)?.id as string;
      const toPull = event?.deliveries.find((d) => d.endpointId === endpointId)?.id as string;
      await waitForRow(server, toWebhook, "delivered", (row) => row.status === "delivered");
      // Sweeps run every second; one more claim pass after the webhook's delivery.
      await server.outboxd.dispatcher?.sweep();
      const row = await deliveryRow(server, toPull);
      expect(row).toMatchObject({ status: "pending", attempt_count: 0, lease_owner: null });
      expect(receiver.received).toHaveLength(1);
      const [pulled] = (await rig.poll()).data as [Pulled];
      expect(pulled.deliveryId).toBe(toPull);
      await rig.ack({ acks: [{ deliveryId: toPull, leaseToken: pulled.leaseToken }] });
      expectStatus(await server.request("DELETE", `/v1/endpoints/${webhook.id}`), 200);
    } finally {
      await receiver.stop();
    }
  });

  test("one aggregate: n+1 is not leased while n is leased; after n's ack, n+1 comes", async () => {
    const { endpointId, server } = rig;
    await commitEvents(
      server,
      [1, 2, 3].map(() => ({ aggregate: "hol/1", endpoints: [endpointId] })),
    );
    const first = await rig.poll({ max: 10 });
    expect(first.data.map((p) => p.event.sequence)).toEqual([1]);
    expect((await rig.poll({ max: 10 })).data).toHaveLength(0);
    const [one] = first.data as [Pulled];
    await rig.ack({ acks: [{ deliveryId: one.deliveryId, leaseToken: one.leaseToken }] });
    const second = await rig.poll({ max: 10 });
    expect(second.data.map((p) => p.event.sequence)).toEqual([2]);
    const [two] = second.data as [Pulled];
    await rig.ack({ acks: [{ deliveryId: two.deliveryId, leaseToken: two.leaseToken }] });
    const [three] = (await rig.poll()).data as [Pulled];
    expect(three.event.sequence).toBe(3);
    await rig.ack({ acks: [{ deliveryId: three.deliveryId, leaseToken: three.leaseToken }] });
  });

  test("a nack with retryAfter comes again not before then; the old token is stale afterwards", async () => {
    const { server, endpointId } = rig;
    const [event] = await commitEvents(server, [{ aggregate: "nack/1", endpoints: [endpointId] }]);
    const deliveryId = onlyDelivery(event);
    const [pulled] = (await rig.poll()).data as [Pulled];
    const before = Date.now();
    expect(
      await rig.ack({ nacks: [{ deliveryId, leaseToken: pulled.leaseToken, retryAfter: "1500ms" }] }),
    ).toEqual({ acked: 0, nacked: 1, stale: [] });
    const row = await deliveryRow(server, deliveryId);
    expect(row.status).toBe("pending");
    expect(row.lease_owner).toBeNull();
    expect(row.next_attempt_at).toBeGreaterThanOrEqual(before + 1500);
    expect(row.last_error).toContain("nacked");
    // Not before: an immediate poll gets nothing.
    expect((await rig.poll()).data).toHaveLength(0);
    // A long poll is woken when it falls due.
    const again = await rig.poll({ wait: "30s" });
    expect(Date.now()).toBeGreaterThanOrEqual(before + 1500);
    expect(again.data.map((p) => [p.deliveryId, p.attempt])).toEqual([[deliveryId, 2]]);
    const stale = await rig.ack({ acks: [{ deliveryId, leaseToken: pulled.leaseToken }] });
    expect(stale.stale).toEqual([deliveryId]);
    const [second] = again.data as [Pulled];
    await rig.ack({ acks: [{ deliveryId, leaseToken: second.leaseToken }] });
    const attempts = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200);
    expect(attempts.map((a: { error: string | null }) => a.error)).toEqual([
      "nacked by a consumer (retryAfter 1500 ms)",
      null,
    ]);
  });

  test("a lease that runs out is a failed attempt found by the sweep; the delivery comes again", async () => {
    const { server, endpointId } = rig;
    const [event] = await commitEvents(server, [{ aggregate: "lapse/1", endpoints: [endpointId] }]);
    const deliveryId = onlyDelivery(event);
    const [first] = (await rig.poll({ lease: "1s" })).data as [Pulled];
    // Backdate the lease instead of sleeping it out; the sweep (every second) finds it.
    await exec(server, "UPDATE deliveries SET lease_expires_at = :past WHERE id = :id", {
      id: deliveryId,
      past: Date.now() - 1,
    });
    const again = await rig.poll({ wait: "30s" });
    expect(again.data.map((p) => [p.deliveryId, p.attempt])).toEqual([[deliveryId, 2]]);
    const attempts = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200);
    expect(attempts[0].error).toBe("the lease ran out without an ack");
    expect((await rig.ack({ acks: [{ deliveryId, leaseToken: first.leaseToken }] })).stale).toEqual([
      deliveryId,
    ]);
    const [second] = again.data as [Pulled];
    await rig.ack({ acks: [{ deliveryId, leaseToken: second.leaseToken }] });
  });

  test("deadline → dead (deadline_exceeded), then replay → pending and leased again from attempt 1", async () => {
    const { server, endpointId } = rig;
    const [event] = await commitEvents(server, [{ aggregate: "deadline/1", endpoints: [endpointId] }]);
    const deliveryId = onlyDelivery(event);
    const [leased] = (await rig.poll()).data as [Pulled];
    // The deadline passes while leased: the nack is then the last attempt.
    await exec(server, "UPDATE deliveries SET deliver_by = :past WHERE id = :id", {
      id: deliveryId,
      past: Date.now() - 1,
    });
    await rig.ack({ nacks: [{ deliveryId, leaseToken: leased.leaseToken }] });
    const dead = await deliveryRow(server, deliveryId);
    expect(dead).toMatchObject({ status: "dead", dead_reason: "deadline_exceeded" });
    const listed = expectStatus(
      await server.request("GET", `/v1/deliveries?status=dead&endpoint=${endpointId}`),
      200,
    );
    expect(listed.data.map((d: { id: string }) => d.id)).toContain(deliveryId);
    expectStatus(await server.request("POST", `/v1/deliveries/${deliveryId}/replay`, {}), 200);
    const [replayed] = (await rig.poll({ wait: "10s" })).data as [Pulled];
    expect(replayed).toMatchObject({ deliveryId, attempt: 1 });
    await rig.ack({ acks: [{ deliveryId, leaseToken: replayed.leaseToken }] });
  });

  test("an unleased pending delivery past its deadline is dead-lettered by the sweep", async () => {
    const { server, endpointId } = rig;
    const [event] = await commitEvents(server, [{ aggregate: "deadline/2", endpoints: [endpointId] }]);
    const deliveryId = onlyDelivery(event);
    await exec(server, "UPDATE deliveries SET deliver_by = :past WHERE id = :id", {
      id: deliveryId,
      past: Date.now() - 1,
    });
    await waitForRow(server, deliveryId, "dead", (row) => row.status === "dead");
    expect((await deliveryRow(server, deliveryId)).dead_reason).toBe("deadline_exceeded");
    expect((await rig.poll()).data.map((p) => p.deliveryId)).not.toContain(deliveryId);
  });

  test("a long poll is woken by a commit and holds no write lock while it waits", async () => {
    const { server, endpointId } = rig;
    const waiting = rig.poll({ wait: "30s" });
    // The poll is waiting (nothing to take): commits still go through.
    await waitUntil("the poll waits", async () => server.outboxd.pull.hub.waiting().includes(endpointId));
    const [event] = await commitEvents(server, [{ aggregate: "wake/1", endpoints: [endpointId] }]);
    const answer = await waiting;
    expect(answer.data.map((p) => p.deliveryId)).toEqual([onlyDelivery(event)]);
    const [pulled] = answer.data as [Pulled];
    await rig.ack({ acks: [{ deliveryId: pulled.deliveryId, leaseToken: pulled.leaseToken }] });
  });

  test("stats and the endpoint's counts show pull deliveries like webhook ones", async () => {
    const { server, endpointId } = rig;
    await commitEvents(server, [{ aggregate: "stats/1", endpoints: [endpointId] }]);
    const [pulled] = (await rig.poll()).data as [Pulled];
    const stats = expectStatus(await server.request("GET", "/v1/stats"), 200);
    const mine = stats.endpoints.find((e: { id: string }) => e.id === endpointId);
    expect(mine).toMatchObject({ pending: 1, inFlight: 1, due: 0 });
    await rig.ack({ acks: [{ deliveryId: pulled.deliveryId, leaseToken: pulled.leaseToken }] });
    const after = expectStatus(await server.request("GET", "/v1/stats"), 200);
    expect(after.endpoints.find((e: { id: string }) => e.id === endpointId)).toMatchObject({
      pending: 0,
      inFlight: 0,
    });
    expect(
      after.endpoints.find((e: { id: string }) => e.id === endpointId).deliveredLastHour,
    ).toBeGreaterThan(0);
  });
});
