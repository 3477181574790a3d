// Leases without claims: a commit's new head is leased to this process's
// dispatcher by its own INSERT and sent with the event the commit handed over; a head promoted by
// a batch of outcomes is claimed in that batch's transaction. What must still hold: the lease is
// fenced like a claim's, a lease whose commit never handed it over is given back, and an endpoint
// changed since the dispatcher read it is never leased on old knowledge.
import { afterEach, describe, expect, test } from "bun:test";
import { normalizeCommit } from "../../src/commit/normalize.ts";
import { commitWrite } from "../../src/commit/writes.ts";
import type { Dispatcher } from "../../src/dispatch/dispatcher.ts";
import { startReceiver } from "../helpers/receiver.ts";
import {
  commitEvents,
  deliveryRow,
  expectStatus,
  ok,
  onlyDelivery,
  type Rig,
  requestsFor,
  startRig,
  waitForRow,
} from "./harness.ts";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
});

function dispatcherOf(r: Rig): Dispatcher {
  return r.server.outboxd.dispatcher as Dispatcher;
}

/** One event delivered the usual way first: the dispatcher then knows the endpoint as it is. */
async function warmUp(r: Rig): Promise<void> {
  const [event] = await commitEvents(r.server, [{ aggregate: "warm/up" }]);
  await waitForRow(r.server, onlyDelivery(event), "delivered", (row) => row.status === "delivered");
}

// Own leases need a write's RETURNING rows inside the operation: the engine driver on a local file
// (the client driver writes groups as the remote write path does, and claims instead).
describe("own leases", () => {
  test("a commit's new heads are leased by its INSERT and sent without a claim, each once, with the committed event", async () => {
    rig = await startRig();
    await warmUp(rig);
    const before = { ...dispatcherOf(rig).leasedBy };
    const events = await commitEvents(
      rig.server,
      Array.from({ length: 5 }, (_, i) => ({ aggregate: `own/${i}`, payload: { n: i } })),
    );
    for (const event of events) {
      const row = await waitForRow(
        rig.server,
        onlyDelivery(event),
        "delivered",
        (r) => r.status === "delivered",
      );
      expect(row.attempt_count).toBe(1);
      const [request] = requestsFor(rig.receiver, event.id);
      expect(requestsFor(rig.receiver, event.id)).toHaveLength(1);
      const body = JSON.parse(request?.body as string);
      expect(body).toMatchObject({ id: event.id, aggregate: event.aggregate, sequence: 1 });
      expect(body.data).toEqual({ n: Number(event.aggregate.split("/")[1]) });
    }
    const after = dispatcherOf(rig).leasedBy;
    expect(after.commit - before.commit).toBe(5);
    expect(after.claim - before.claim).toBe(0);
  });

  test("the next event of a queue is claimed in the transaction of the outcome that made it the head, in order", async () => {
    rig = await startRig();
    await warmUp(rig);
    const before = { ...dispatcherOf(rig).leasedBy };
    // Three events of one aggregate in one commit: the first is the head (leased by the INSERT),
    // the others wait behind it and become heads one by one as each is delivered.
    const events = await commitEvents(
      rig.server,
      [0, 1, 2].map((n) => ({ aggregate: "orders/o-1", payload: { n } })),
    );
    for (const event of events) {
      await waitForRow(rig.server, onlyDelivery(event), "delivered", (r) => r.status === "delivered");
    }
    const sequences = rig.receiver.received
      .map((r) => JSON.parse(r.body))
      .filter((b) => b.aggregate === "orders/o-1")
      .map((b) => b.sequence);
    expect(sequences).toEqual([1, 2, 3]);
    const after = dispatcherOf(rig).leasedBy;
    expect(after.commit - before.commit).toBe(1);
    expect(after.outcomes - before.outcomes).toBe(2);
    expect(after.claim - before.claim).toBe(0);
  });

  test("a lease a commit took but never handed over is given back, and the delivery is sent once", async () => {
    rig = await startRig();
    await warmUp(rig);
    const { outboxd } = rig.server;
    // The commit written as the commit service would (the dispatcher's leases lent to it), but
    // never announced: the dispatcher is not told that its lease is durable.
    const input = normalizeCommit(
      { events: [{ type: "thing.changed", aggregate: "lost/1", payload: {} }] },
      {
        by: { tokenId: "tok_test", tokenName: "test" },
        now: Date.now(),
        limits: outboxd.config,
        idempotency: undefined,
        traceparent: undefined,
        conflictStatus: 409,
      },
    );
    const outcome = await outboxd.db.write(commitWrite(input));
    const [event] = outcome.result.events;
    const id = onlyDelivery(event);
    const leased = await deliveryRow(rig.server, id);
    expect(leased.lease_owner).not.toBeNull();
    expect(leased.attempt_count).toBe(1);
    const row = await waitForRow(rig.server, id, "delivered", (r) => r.status === "delivered");
    expect(row.attempt_count).toBe(1);
    expect(requestsFor(rig.receiver, event?.id as string)).toHaveLength(1);
  });

  test("an endpoint changed since the dispatcher read it is not leased on old knowledge: its new url is used", async () => {
    rig = await startRig();
    await warmUp(rig);
    const moved = startReceiver(ok);
    try {
      expectStatus(
        await rig.server.request("PATCH", `/v1/endpoints/${rig.endpointId}`, { url: moved.url }),
        200,
      );
      const [event] = await commitEvents(rig.server, [{ aggregate: "moved/1" }]);
      await waitForRow(rig.server, onlyDelivery(event), "delivered", (r) => r.status === "delivered");
      expect(requestsFor(moved, event?.id as string)).toHaveLength(1);
      expect(requestsFor(rig.receiver, event?.id as string)).toHaveLength(0);
    } finally {
      await moved.stop();
    }
  });
});
