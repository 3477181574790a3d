// Filters and previousSequence end to end (DESIGN §19): a real server delivers to real receivers
// on 127.0.0.1. A filter applies at type-based fan-out and explicit endpoints bypass it; every
// body carries previousSequence, the aggregate's latest earlier sequence sent to that endpoint,
// which the snippet's applyOnce turns into missedForEndpoint; pulled deliveries carry it too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { applyOnce, memoryStore, type OutboxEvent } from "../../src/receiver/verify.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
const receivers: TestReceiver[] = [];
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.stop();
  for (const receiver of receivers) await receiver.stop();
});

async function endpoint(body: Record<string, unknown>) {
  const receiver = startReceiver();
  receivers.push(receiver);
  const created = expectStatus(
    await server.request("POST", "/v1/endpoints", { url: receiver.url, ...body }),
    201,
  );
  return { receiver, id: created.id as string };
}

function bodies(receiver: TestReceiver): OutboxEvent[] {
  return receiver.received.map((r) => JSON.parse(r.body) as OutboxEvent);
}

async function commit(aggregate: string, type: string, data: unknown, endpoints?: string[]) {
  return expectStatus(
    await server.request("POST", "/v1/commits", { events: [{ type, aggregate, payload: data, endpoints }] }),
    201,
  );
}

describe("filter", () => {
  test("only events whose body meets every condition are delivered; the others leave gaps previousSequence spans", async () => {
    const aggregate = `orders/${crypto.randomUUID()}`;
    const filtered = await endpoint({
      eventTypes: ["order.*"],
      filter: [
        { path: "/data/status", op: "in", value: ["approved", "refunded"] },
        { path: "/data/amount", op: "gt", value: 10 },
        { path: "/aggregate", op: "prefix", value: "orders/" },
        { path: "/data/note", op: "exists", value: false },
      ],
    });
    const everything = await endpoint({ eventTypes: ["order.*"] });
    const steps: [string, unknown][] = [
      ["order.created", { status: "new", amount: 50 }], // 1: status
      ["order.approved", { status: "approved", amount: 50 }], // 2: passes
      ["order.approved", { status: "approved", amount: 5 }], // 3: amount
      ["order.approved", { status: "approved", amount: "50" }], // 4: gt on a string is false
      ["order.noted", { status: "approved", amount: 50, note: "x" }], // 5: note exists
      ["order.refunded", { status: "refunded", amount: 11 }], // 6: passes
    ];
    const answers = [];
    for (const [type, data] of steps) answers.push(await commit(aggregate, type, data));
    // The commit's answer names only the deliveries the filter let through.
    const deliveredTo = answers.map((a) =>
      a.events[0].deliveries.map((d: { endpointId: string }) => d.endpointId),
    );
    expect(deliveredTo.map((ids) => ids.includes(filtered.id))).toEqual([
      false,
      true,
      false,
      false,
      false,
      true,
    ]);
    await waitFor("6 events at the unfiltered endpoint", () => everything.receiver.received.length === 6);
    await waitFor("2 events at the filtered endpoint", () => filtered.receiver.received.length === 2);
    expect(bodies(filtered.receiver).map((b) => [b.sequence, b.previousSequence])).toEqual([
      [2, null],
      [6, 2],
    ]);
    expect(bodies(everything.receiver).map((b) => b.previousSequence)).toEqual([null, 1, 2, 3, 4, 5]);
    // The snippet counts the gaps, and knows none of them was meant for this endpoint.
    const store = memoryStore();
    const results = [];
    for (const event of bodies(filtered.receiver)) results.push(await applyOnce(event, store, () => {}));
    expect(results).toEqual([
      { result: "applied", missed: 1, missedForEndpoint: false },
      { result: "applied", missed: 3, missedForEndpoint: false },
    ]);
  });

  test("explicit endpoints bypass the filter; a changed filter applies to later events", async () => {
    const aggregate = `orders/${crypto.randomUUID()}`;
    const target = await endpoint({
      eventTypes: ["order.*"],
      filter: [{ path: "/data/vip", op: "eq", value: true }],
    });
    await commit(aggregate, "order.created", { vip: false }); // 1: filtered out
    await commit(aggregate, "order.created", { vip: false }, [target.id]); // 2: explicit
    expectStatus(
      await server.request("PATCH", `/v1/endpoints/${target.id}`, {
        filter: [{ path: "/data/vip", op: "ne", value: true }],
      }),
      200,
    );
    await commit(aggregate, "order.created", { vip: false }); // 3: passes the new filter
    await commit(aggregate, "order.created", { vip: true }); // 4: filtered out
    expectStatus(await server.request("PATCH", `/v1/endpoints/${target.id}`, { filter: null }), 200);
    await commit(aggregate, "order.created", { vip: true }); // 5: no filter
    await waitFor("3 events", () => target.receiver.received.length === 3);
    expect(bodies(target.receiver).map((b) => [b.sequence, b.previousSequence])).toEqual([
      [2, null],
      [3, 2],
      [5, 3],
    ]);
  });

  test("a lost delivery is missedForEndpoint: the dead one's sequence is the next one's previousSequence", async () => {
    const aggregate = `orders/${crypto.randomUUID()}`;
    const target = await endpoint({ eventTypes: ["lost.*"] });
    const first = await commit(aggregate, "lost.one", {});
    await waitFor("the first event", () => target.receiver.received.length === 1);
    // The second is cancelled before it is sent: it never arrives.
    const paused = expectStatus(
      await server.request("PATCH", `/v1/endpoints/${target.id}`, { disabled: true }),
      200,
    );
    expect(paused.disabled).toBe(true);
    const second = await commit(aggregate, "lost.two", {});
    expectStatus(
      await server.request("POST", `/v1/deliveries/${second.events[0].deliveries[0].id}/cancel`),
      200,
    );
    expectStatus(await server.request("POST", `/v1/endpoints/${target.id}/enable`), 200);
    await commit(aggregate, "lost.three", {});
    await waitFor("the third event", () => target.receiver.received.length === 2);
    const [one, three] = bodies(target.receiver) as [OutboxEvent, OutboxEvent];
    expect(one.id).toBe(first.events[0].id);
    expect(three.previousSequence).toBe(2);
    const store = memoryStore();
    await applyOnce(one, store, () => {});
    expect(await applyOnce(three, store, () => {})).toEqual({
      result: "applied",
      missed: 1,
      missedForEndpoint: true,
    });
  });

  test("a pulled delivery's event carries previousSequence", async () => {
    const aggregate = `orders/${crypto.randomUUID()}`;
    const pull = expectStatus(
      await server.request("POST", "/v1/endpoints", {
        kind: "pull",
        eventTypes: ["pulled.*"],
        filter: [{ path: "/data/keep", op: "eq", value: true }],
      }),
      201,
    );
    for (const keep of [true, false, true]) await commit(aggregate, "pulled.x", { keep });
    const seen: [number, number | null][] = [];
    await waitFor("two pulled events", async () => {
      const polled = expectStatus(await server.request("POST", `/v1/endpoints/${pull.id}/poll`, {}), 200);
      for (const d of polled.data) {
        seen.push([d.event.sequence, d.event.previousSequence]);
        expectStatus(
          await server.request("POST", `/v1/endpoints/${pull.id}/ack`, {
            acks: [{ deliveryId: d.deliveryId, leaseToken: d.leaseToken }],
          }),
          200,
        );
      }
      return seen.length === 2;
    });
    expect(seen).toEqual([
      [1, null],
      [3, 1],
    ]);
  });
});
