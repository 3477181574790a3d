// Event-id reuse: event ids are global, so a
// commit token that reuses another token's event id must not learn from the answer whether
// its guess of that event's payload was right. Only the committing token, with the same
// content, gets the existing event back; every other reuse is the same 409.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type Request } from "../helpers/api.ts";
import { eventsOf, expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("event-id reuse", () => {
  let server: TestServer;
  let alice: Request;
  let mallory: Request;
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
    const token = async (name: string) =>
      expectStatus(await server.request("POST", "/v1/tokens", { name, scopes: ["commit"] }), 201).token;
    alice = apiClient(server.url, await token("alice"));
    mallory = apiClient(server.url, await token("mallory"));
  });
  afterAll(async () => {
    await server.stop();
  });

  const event = (id: string, payload: unknown) => ({
    events: [{ id, type: "order.paid", aggregate: "orders/o-1", payload }],
  });

  test("another token's reuse is 409 event-id-taken, the same whether its guess is right or wrong", async () => {
    const id = crypto.randomUUID();
    const secret = { card: "4111-1111-1111-1111", amount: 4200 };
    expectStatus(await alice("POST", "/v1/commits", event(id, secret)), 201);

    const right = expectProblem(await mallory("POST", "/v1/commits", event(id, secret)), 409, "/events/0/id");
    const wrong = expectProblem(
      await mallory("POST", "/v1/commits", event(id, { card: "5500-0000-0000-0004", amount: 1 })),
      409,
      "/events/0/id",
    );
    expect(right.type).toEndWith("/event-id-taken");
    // Nothing in the answer may depend on the guess.
    expect(right).toEqual(wrong);
    expect(JSON.stringify(right)).not.toContain("4111");
    expect(await eventsOf(server, "orders/o-1")).toHaveLength(1);
  });

  test("the committing token's retry with the same content returns the existing event", async () => {
    const id = crypto.randomUUID();
    const first = expectStatus(await alice("POST", "/v1/commits", event(id, { n: 1 })), 201);
    const again = expectStatus(await alice("POST", "/v1/commits", event(id, { n: 1 })), 201);
    expect(again.events[0]).toEqual(first.events[0]);
  });

  test("the committing token's reuse with other content is 409 event-id-taken", async () => {
    const id = crypto.randomUUID();
    expectStatus(await alice("POST", "/v1/commits", event(id, { n: 1 })), 201);
    const body = expectProblem(await alice("POST", "/v1/commits", event(id, { n: 2 })), 409, "/events/0/id");
    expect(body.type).toEndWith("/event-id-taken");
  });
});
