// Cancel (DESIGN §3: without it, a deliverAfter in year 9999 would block its aggregate for good).
// A pending delivery that is not
// leased becomes dead with reason `cancelled`, visible and replayable, and the next event of
// its aggregate goes out; anything else is 409 — a leased one with Retry-After.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("POST /v1/deliveries/{id}/cancel", () => {
  let server: TestServer;
  let receiver: TestReceiver;
  let endpoint: string;
  let release: () => void = () => {};
  beforeAll(async () => {
    receiver = startReceiver();
    server = await startServer({ OUTBOXD_RETRY_BASE: "50ms", OUTBOXD_RETRY_CAP: "100ms" });
    endpoint = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201).id;
  });
  afterAll(async () => {
    release();
    await server.stop();
    await receiver.stop();
  });

  const commit = async (aggregate: string, extra: Record<string, unknown> = {}) =>
    expectStatus(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "cancel.test", aggregate, endpoints: [endpoint], ...extra }],
      }),
      201,
    ).events[0].deliveries[0].id as string;
  const delivery = async (id: string) =>
    expectStatus(await server.request("GET", `/v1/deliveries/${id}`), 200);
  const cancel = (id: string) => server.request("POST", `/v1/deliveries/${id}/cancel`);

  test("a scheduled delivery that holds its aggregate back is cancelled, and the next event goes out", async () => {
    const later = new Date(Date.now() + 20 * 86_400_000).toISOString();
    const held = await commit("cancel/1", { deliverAfter: later });
    const next = await commit("cancel/1");
    // The scheduled head holds the next event back.
    expect((await delivery(next)).status).toBe("pending");

    const cancelled = expectStatus(await cancel(held), 200);
    expect(cancelled).toMatchObject({ id: held, status: "dead", deadReason: "cancelled" });
    await waitFor(
      "the next event of the aggregate to be delivered",
      async () => (await delivery(next)).status === "delivered",
    );

    // Visible among the dead, and replayable like every dead delivery.
    const dead = expectStatus(
      await server.request("GET", "/v1/deliveries?status=dead&reason=cancelled"),
      200,
    );
    expect(dead.data.map((d: { id: string }) => d.id)).toContain(held);
    expect(expectStatus(await server.request("POST", `/v1/deliveries/${held}/replay`), 200).status).toBe(
      "pending",
    );
  });

  test("a dead or delivered delivery is 409; an unknown one 404", async () => {
    const id = await commit("cancel/2");
    await waitFor("the delivery", async () => (await delivery(id)).status === "delivered");
    expect(expectProblem(await cancel(id), 409).type).toEndWith("/not-pending");
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = await commit("cancel/3", { deliverAfter: later });
    expectStatus(await cancel(scheduled), 200);
    expect(expectProblem(await cancel(scheduled), 409).type).toEndWith("/not-pending");
    expectProblem(await cancel("dlv_does_not_exist"), 404);
  });

  test("a delivery being sent (leased) is 409 with Retry-After, and is delivered as its attempt decides", async () => {
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.respond = async () => {
      await gate;
      return new Response("{}", { status: 200 });
    };
    const before = receiver.received.length;
    const id = await commit("cancel/4");
    await waitFor("the send to start", () => receiver.received.length > before);
    const refused = await cancel(id);
    expect(expectProblem(refused, 409).type).toEndWith("/delivery-leased");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    release();
    await waitFor("the delivery", async () => (await delivery(id)).status === "delivered");
  });
});
