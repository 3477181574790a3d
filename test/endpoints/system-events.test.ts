// outboxd.endpoint.disabled / .enabled (DESIGN §19): each change of an endpoint between enabled and
// disabled commits one event through the commit path, in the transaction of the change, exactly
// once per transition (PATCH, enable, a 410 answer); it reaches endpoints whose patterns start
// with outboxd. (signed, in order), never `*`, no patterns, or the endpoint it is about; the
// ledger records the acting token or null, and verifies.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { type OutboxEvent, verifyWebhook } from "../../src/receiver/verify.ts";
import { sql } from "../dispatch/harness.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
const receivers: TestReceiver[] = [];
beforeAll(async () => {
  server = await startServer({ OUTBOXD_SEND_TIMEOUT: "2s", OUTBOXD_LEASE: "5s" });
});
afterAll(async () => {
  await server.stop();
  for (const receiver of receivers) await receiver.stop();
});

async function endpoint(body: Record<string, unknown>, respond?: TestReceiver["respond"]) {
  const receiver = startReceiver(respond);
  receivers.push(receiver);
  const created = expectStatus(
    await server.request("POST", "/v1/endpoints", { url: receiver.url, ...body }),
    201,
  );
  return { receiver, id: created.id as string, secret: created.secret as string };
}

async function systemEvents(receiver: TestReceiver, secret: string, about: string): Promise<OutboxEvent[]> {
  const events: OutboxEvent[] = [];
  for (const request of receiver.received) {
    const event = await verifyWebhook({ headers: request.headers, body: request.body }, secret);
    if (event.aggregate === `outboxd/endpoints/${about}`) events.push(event);
  }
  return events;
}

describe("system events", () => {
  test("PATCH and enable commit one event per transition, to outboxd.* subscribers only, signed and in order", async () => {
    const watcher = await endpoint({ eventTypes: ["outboxd.endpoint.*"] });
    const exact = await endpoint({ eventTypes: ["outboxd.endpoint.disabled"] });
    const star = await endpoint({ eventTypes: ["*"] });
    const none = await endpoint({});
    const subject = await endpoint({ eventTypes: ["other.*"], description: "billing" });
    const patch = (disabled: boolean) => server.request("PATCH", `/v1/endpoints/${subject.id}`, { disabled });
    expectStatus(await patch(true), 200);
    expectStatus(await patch(true), 200); // no change: no event
    expectStatus(await server.request("POST", `/v1/endpoints/${subject.id}/enable`), 200);
    expectStatus(await server.request("POST", `/v1/endpoints/${subject.id}/enable`), 200); // no change
    expectStatus(await patch(true), 200);
    expectStatus(await patch(false), 200);
    await waitFor("four events at the watcher", async () => {
      return (await systemEvents(watcher.receiver, watcher.secret, subject.id)).length === 4;
    });
    const seen = await systemEvents(watcher.receiver, watcher.secret, subject.id);
    expect(seen.map((e) => [e.type, e.sequence, e.previousSequence])).toEqual([
      ["outboxd.endpoint.disabled", 1, null],
      ["outboxd.endpoint.enabled", 2, 1],
      ["outboxd.endpoint.disabled", 3, 2],
      ["outboxd.endpoint.enabled", 4, 3],
    ]);
    expect(seen[0]?.data).toEqual({
      endpointId: subject.id,
      description: "billing",
      reason: "operator",
      failingSince: null,
      lastError: null,
    });
    expect(seen[1]?.data).toEqual({
      endpointId: subject.id,
      description: "billing",
      enabledBy: { tokenId: expect.stringMatching(/^tok_|^admin/), tokenName: expect.any(String) },
    });
    for (const request of watcher.receiver.received) expect(request.body).not.toContain(subject.receiver.url);
    await waitFor("the two disabled events at the exact pattern", async () => {
      return (await systemEvents(exact.receiver, exact.secret, subject.id)).length === 2;
    });
    // `*` and no patterns do not match outboxd.* events; a commit meanwhile reaches them.
    expectStatus(
      await server.request("POST", "/v1/commits", { events: [{ type: "after.all", aggregate: "after/1" }] }),
      201,
    );
    await waitFor(
      "the commit at * and at no patterns",
      () => star.receiver.received.length === 1 && none.receiver.received.length === 1,
    );
    expect(JSON.parse(star.receiver.received[0]?.body ?? "{}").type).toBe("after.all");
    expect(JSON.parse(none.receiver.received[0]?.body ?? "{}").type).toBe("after.all");
    // The events were committed by the acting token, and the chain verifies.
    const commits = await sql<{ tokenId: string | null }>(
      server,
      `SELECT c.token_id AS tokenId FROM events e JOIN commits c ON c.id = e.commit_id WHERE e.aggregate = :a ORDER BY e.sequence`,
      { a: `outboxd/endpoints/${subject.id}` },
    );
    expect(commits).toHaveLength(4);
    for (const c of commits) expect(c.tokenId).not.toBeNull();
    expect(await server.outboxd.db.driver.read(verifyLedger())).toMatchObject({ ok: true });
  });

  test("an endpoint never gets the events about itself", async () => {
    const self = await endpoint({ eventTypes: ["outboxd.*"] });
    const other = await endpoint({ eventTypes: ["outboxd.*"] });
    expectStatus(await server.request("PATCH", `/v1/endpoints/${self.id}`, { disabled: true }), 200);
    expectStatus(await server.request("POST", `/v1/endpoints/${self.id}/enable`), 200);
    await waitFor("two events at the other", async () => {
      return (await systemEvents(other.receiver, other.secret, self.id)).length === 2;
    });
    const [event] = await sql<{ id: string }>(
      server,
      "SELECT id FROM events WHERE aggregate = :a AND sequence = 1",
      { a: `outboxd/endpoints/${self.id}` },
    );
    const deliveries = await sql<{ endpointId: string }>(
      server,
      "SELECT endpoint_id AS endpointId FROM deliveries WHERE event_id = :id",
      { id: event?.id ?? "" },
    );
    expect(deliveries.map((d) => d.endpointId)).not.toContain(self.id);
    expect(await systemEvents(self.receiver, self.secret, self.id)).toEqual([]);
  });

  test("a 410 disables the endpoint once (reason gone) and commits the event with no token", async () => {
    const watcher = await endpoint({ eventTypes: ["outboxd.*"] });
    const gone = await endpoint(
      { eventTypes: ["gone.*"], description: "old" },
      () => new Response("bye", { status: 410 }),
    );
    // Two aggregates, so two 410 answers can come before the endpoint is seen disabled.
    expectStatus(
      await server.request("POST", "/v1/commits", {
        events: [
          { type: "gone.x", aggregate: "gone/1" },
          { type: "gone.x", aggregate: "gone/2" },
        ],
      }),
      201,
    );
    await waitFor("the disabled event", async () => {
      return (await systemEvents(watcher.receiver, watcher.secret, gone.id)).length === 1;
    });
    const [event] = await systemEvents(watcher.receiver, watcher.secret, gone.id);
    expect(event?.type).toBe("outboxd.endpoint.disabled");
    expect(event?.data).toMatchObject({ endpointId: gone.id, description: "old", reason: "gone" });
    expect((event as OutboxEvent).data).toMatchObject({ lastError: expect.stringContaining("410") });
    const read = expectStatus(await server.request("GET", `/v1/endpoints/${gone.id}`), 200);
    expect(read).toMatchObject({ disabled: true, disabledReason: "gone" });
    const commits = await sql<{ tokenId: string | null; n: number }>(
      server,
      `SELECT c.token_id AS tokenId, count(*) AS n FROM events e JOIN commits c ON c.id = e.commit_id
       WHERE e.aggregate = :a GROUP BY c.token_id`,
      { a: `outboxd/endpoints/${gone.id}` },
    );
    expect(commits).toEqual([{ tokenId: null, n: 1 }]);
    const history = expectStatus(await server.request("GET", "/v1/ledger"), 200);
    expect(history.commits).toBeGreaterThan(0);
    expect(await server.outboxd.db.driver.read(verifyLedger())).toMatchObject({ ok: true });
  });
});
