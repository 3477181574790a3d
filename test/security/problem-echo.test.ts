// Problem details never carry what the client sent: a 422 names the field
// (a pointer) and the rule, never the value, so a token or secret sent in the wrong place does
// not come back into client and proxy logs; and a problem stays a few KiB whatever the input.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createEndpoint, expectProblem } from "../helpers/assertions.ts";
import { startServer, type TestResponse, type TestServer } from "../helpers/server.ts";

const SECRET_TOKEN = `otk_${"S".repeat(43)}`;
const SECRET = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
const MAX_PROBLEM_BYTES = 4096;

describe("problems echo no request values", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
  });
  afterAll(async () => {
    await server.stop();
  });

  /** The raw answer as the client (and any proxy log) sees it. */
  const size = (response: TestResponse) => Buffer.byteLength(JSON.stringify(response.body));

  test("a token sent as the whole body of POST /v1/tokens is not quoted back", async () => {
    const response = await server.request("POST", "/v1/tokens", JSON.stringify(SECRET_TOKEN));
    expectProblem(response, 422, "");
    expect(JSON.stringify(response.body)).not.toContain(SECRET_TOKEN);
  });

  test("a secret in the wrong field of PATCH /v1/endpoints/{id} is not quoted back", async () => {
    const id = await createEndpoint(server);
    for (const body of [{ disabled: SECRET }, { eventTypes: [SECRET] }, { url: 7, description: [SECRET] }]) {
      const response = await server.request("PATCH", `/v1/endpoints/${id}`, body);
      expectProblem(response, 422);
      expect(JSON.stringify(response.body)).not.toContain(SECRET);
      expect(JSON.stringify(response.body)).not.toContain("whsec_");
    }
  });

  test("wrong types, values and unknown endpoint ids in a commit are not quoted back", async () => {
    const response = await server.request("POST", "/v1/commits", {
      records: [{ collection: SECRET, id: 1, expectedVersion: SECRET }],
      events: [{ type: "a.b", aggregate: "x", deliverWithin: SECRET }],
    });
    expectProblem(response, 422, "/records/0/collection");
    expect(JSON.stringify(response.body)).not.toContain("whsec_");
    const unknown = await server.request("POST", "/v1/commits", {
      events: [{ type: "a.b", aggregate: "x", endpoints: [`ep_${SECRET}`] }],
    });
    expectProblem(unknown, 422, "/events/0/endpoints/0");
    expect(JSON.stringify(unknown.body)).not.toContain("whsec_");
  });

  test("a 200 KB double-encoded commit body answers a small problem", async () => {
    const inner = JSON.stringify({
      events: [{ type: "a.b", aggregate: "x", payload: { blob: "y".repeat(200_000) } }],
    });
    const response = await server.request("POST", "/v1/commits", JSON.stringify(inner));
    expectProblem(response, 422, "");
    expect(size(response)).toBeLessThan(MAX_PROBLEM_BYTES);
    expect(JSON.stringify(response.body)).not.toContain("yyyy");
  });

  test("a body with 100,000 wrong items answers a bounded problem that says how many it left out", async () => {
    const response = await server.request("POST", "/v1/commits", {
      events: Array.from({ length: 100_000 }, () => 1),
    });
    const body = expectProblem(response, 422, "/events/0");
    expect(size(response)).toBeLessThan(MAX_PROBLEM_BYTES);
    expect(body.errors.length).toBeLessThanOrEqual(10);
    expect(body.errorsOmitted).toBeGreaterThan(0);
  });

  test("an unknown field with a 900 KB name is not quoted back", async () => {
    const key = "k".repeat(900_000);
    const response = await server.request("POST", "/v1/commits", `{"events": [], "${key}": 1}`);
    const body = expectProblem(response, 422);
    expect(size(response)).toBeLessThan(MAX_PROBLEM_BYTES);
    expect(body.errors.some((e: { pointer: string }) => e.pointer === "")).toBe(true);
  });

  test("a 404 for a very long id stays small", async () => {
    const response = await server.request("GET", `/v1/events/${"e".repeat(6000)}`);
    expectProblem(response, 404);
    expect(size(response)).toBeLessThan(MAX_PROBLEM_BYTES);
  });
});
