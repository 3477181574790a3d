// Replay keeps one lease per queue (DESIGN §3 replay): replaying an older dead delivery while a later
// one of the same (endpoint, aggregate) is leased makes the replayed one wait until that lease
// ends; it is then the queue's head and goes first, the later one after it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectStatus } from "../dispatch/harness.ts";
import { type PullRig, startPullRig } from "./helpers.ts";

let rig: PullRig;
beforeAll(async () => {
  rig = await startPullRig();
});
afterAll(async () => {
  await rig?.stop();
});

async function commitEvent(aggregate: string, n: number): Promise<string> {
  const answer = expectStatus(
    await rig.server.request("POST", "/v1/commits", {
      events: [{ type: "order.changed", aggregate, payload: { n } }],
    }),
    201,
  );
  return answer.events[0].deliveries[0].id as string;
}

test("a replayed older delivery is not leased while a later one of its queue is; it goes when that lease ends", async () => {
  const first = await commitEvent("orders/o-1", 1);
  const second = await commitEvent("orders/o-1", 2);
  // The first is cancelled (dead), so the second becomes the head and a consumer leases it.
  expectStatus(await rig.server.request("POST", `/v1/deliveries/${first}/cancel`), 200);
  const leased = await rig.poll({ max: 10, lease: "2s" });
  expect(leased.data.map((d) => d.deliveryId)).toEqual([second]);
  const leaseEnds = Date.parse(leased.leaseExpiresAt as string);

  // The operator replays the first while the second is leased.
  const replayed = expectStatus(await rig.server.request("POST", `/v1/deliveries/${first}/replay`), 200);
  expect(replayed.status).toBe("pending");
  expect(Date.parse(replayed.nextAttemptAt)).toBeGreaterThanOrEqual(leaseEnds);
  // One lease per queue: nothing more to lease while the second's lease lasts.
  const during = await rig.poll({ max: 10, lease: "2s" });
  expect(during.data).toEqual([]);

  // The second's consumer acks; the replayed first is leased once the lease it waited for ends.
  expect(
    await rig.ack({ acks: [{ deliveryId: second, leaseToken: leased.data[0]?.leaseToken }] }),
  ).toMatchObject({
    acked: 1,
  });
  const deadline = Date.now() + 15_000;
  let next = await rig.poll({ max: 10, lease: "10s", wait: "1s" });
  while (next.data.length === 0 && Date.now() < deadline)
    next = await rig.poll({ max: 10, lease: "10s", wait: "1s" });
  expect(Date.now()).toBeGreaterThanOrEqual(leaseEnds);
  expect(next.data.map((d) => d.deliveryId)).toEqual([first]);
});

test("a replayed older delivery whose later one is leased and then fails goes first: the later one waits behind it", async () => {
  const first = await commitEvent("orders/o-2", 3);
  const second = await commitEvent("orders/o-2", 4);
  expectStatus(await rig.server.request("POST", `/v1/deliveries/${first}/cancel`), 200);
  const leased = await rig.poll({ max: 10, lease: "1s" });
  expect(leased.data.map((d) => d.deliveryId)).toEqual([second]);
  expectStatus(await rig.server.request("POST", `/v1/deliveries/${first}/replay`), 200);
  // The second's consumer nacks it (retry at once): it is pending again, behind the replayed first.
  expect(
    await rig.ack({
      nacks: [{ deliveryId: second, leaseToken: leased.data[0]?.leaseToken, retryAfter: "0s" }],
    }),
  ).toMatchObject({ nacked: 1 });
  const deadline = Date.now() + 15_000;
  const seen: string[] = [];
  while (seen.length < 2 && Date.now() < deadline) {
    const batch = await rig.poll({ max: 10, lease: "10s", wait: "1s" });
    // Never two of the queue at once.
    expect(batch.data.length).toBeLessThanOrEqual(1);
    for (const d of batch.data) {
      seen.push(d.deliveryId);
      expect(await rig.ack({ acks: [{ deliveryId: d.deliveryId, leaseToken: d.leaseToken }] })).toMatchObject(
        {
          acked: 1,
        },
      );
    }
  }
  expect(seen).toEqual([first, second]);
});
