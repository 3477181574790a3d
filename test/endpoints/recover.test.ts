// POST /v1/endpoints/{id}/recover (DESIGN §19): after an outage, exactly the endpoint's
// deadline_exceeded deliveries of events committed since `since` (and until `until`) go back to
// pending, erased events are skipped, the endpoint is enabled with its system event, and the
// receiver gets them in sequence order per aggregate.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eraseEventPayload } from "../../src/ledger/erase.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let receiver: TestReceiver;
beforeAll(async () => {
  server = await startServer({ OUTBOXD_DISPATCH_CRON: "* * * * * *" }, { writer: "here" });
  receiver = startReceiver();
});
afterAll(async () => {
  await server.stop();
  await receiver.stop();
});

async function commitTo(endpointId: string, aggregate: string, n: number): Promise<string[]> {
  const events = Array.from({ length: n }, (_, i) => ({
    type: "outage.x",
    aggregate,
    payload: { i },
    deliverWithin: "1s",
    endpoints: [endpointId],
  }));
  const answer = expectStatus(await server.request("POST", "/v1/commits", { events }), 201);
  return answer.events.map((e: { id: string }) => e.id);
}

test("recover replays exactly the dead deliveries since `since`, in order, skips erased events, and enables", async () => {
  const watcher = startReceiver();
  try {
    expectStatus(
      await server.request("POST", "/v1/endpoints", { url: watcher.url, eventTypes: ["outboxd.*"] }),
      201,
    );
    const { id } = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
    expectStatus(await server.request("PATCH", `/v1/endpoints/${id}`, { disabled: true }), 200);
    const before = await commitTo(id, "outage/a", 2);
    const { occurredAt } = expectStatus(await server.request("GET", `/v1/events/${before[1]}`), 200);
    await waitFor("a later millisecond", () => Date.now() > Date.parse(occurredAt) + 5);
    const since = new Date(Date.parse(occurredAt) + 1).toISOString();
    const a = await commitTo(id, "outage/a", 3);
    const b = await commitTo(id, "outage/b", 2);
    const erased = await commitTo(id, "outage/c", 1);
    await waitFor("every delivery dead by its deadline", async () => {
      const dead = expectStatus(
        await server.request("GET", `/v1/deliveries?status=dead&endpoint=${id}`),
        200,
      );
      return (
        dead.data.length === 8 &&
        dead.data.every((d: { deadReason: string }) => d.deadReason === "deadline_exceeded")
      );
    });
    expect(await server.outboxd.db.writer.write(eraseEventPayload(erased[0] as string, Date.now()))).toEqual({
      erased: true,
    });

    const answer = expectStatus(
      await server.request("POST", `/v1/endpoints/${id}/recover`, { since, deliverWithin: "1h" }),
      200,
    );
    expect(answer).toEqual({ replayed: 5, skipped: 1, enabled: true });
    expect(expectStatus(await server.request("GET", `/v1/endpoints/${id}`), 200).disabled).toBe(false);
    await waitFor("the five recovered events", () => receiver.received.length === 5);
    const got = receiver.received.map(
      (r) => JSON.parse(r.body) as { id: string; aggregate: string; sequence: number },
    );
    expect(new Set(got.map((e) => e.id))).toEqual(new Set([...a, ...b]));
    for (const aggregate of ["outage/a", "outage/b"]) {
      const sequences = got.filter((e) => e.aggregate === aggregate).map((e) => e.sequence);
      expect(sequences).toEqual([...sequences].sort((x, y) => x - y));
    }
    // The two before `since` stay dead; the erased one too.
    const dead = expectStatus(await server.request("GET", `/v1/deliveries?status=dead&endpoint=${id}`), 200);
    expect(dead.data.map((d: { eventId: string }) => d.eventId).sort()).toEqual(
      [...before, ...erased].sort(),
    );
    // The endpoint's enabling is one system event.
    await waitFor("the disabled and enabled events", () => watcher.received.length === 2);
    expect(watcher.received.map((r) => JSON.parse(r.body).type)).toEqual([
      "outboxd.endpoint.disabled",
      "outboxd.endpoint.enabled",
    ]);
  } finally {
    await watcher.stop();
  }
});

test("until bounds the range; bad input is 422 with the pointer; an unknown endpoint is 404", async () => {
  const { id } = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
  expectProblem(await server.request("POST", `/v1/endpoints/${id}/recover`, {}), 422, "/since");
  expectProblem(
    await server.request("POST", `/v1/endpoints/${id}/recover`, {
      since: "2026-12-02T00:00:00Z",
      until: "2026-12-01T00:00:00Z",
    }),
    422,
    "/until",
  );
  expectProblem(
    await server.request("POST", `/v1/endpoints/${id}/recover`, {
      since: "2026-12-01T00:00:00Z",
      deliverWithin: "soon",
    }),
    422,
    "/deliverWithin",
  );
  expectProblem(
    await server.request("POST", "/v1/endpoints/ep_nope/recover", { since: "2026-12-01T00:00:00Z" }),
    404,
  );
  expect(
    expectStatus(
      await server.request("POST", `/v1/endpoints/${id}/recover`, {
        since: "2020-01-01T00:00:00Z",
        until: "2020-01-02T00:00:00Z",
      }),
      200,
    ),
  ).toEqual({ replayed: 0, skipped: 0, enabled: true });
});
