// GET /openapi.json and GET /docs (DESIGN §3). Every route the app serves documents itself
// (src/http/openapi/route.ts) and the document is assembled from the app's routes; a real
// workload's answers, successes and problems, each follow the schema documented for their
// status; DESIGN §3's routes carry their scopes; request bodies and queries are the valibot
// schemas that validate them; every example follows its schema; both pages are public.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { toJsonSchema } from "@valibot/to-json-schema";
import { Hono } from "hono";
import * as v from "valibot";
import { CommitSchema, EventSchema, RecordWriteSchema, Timestamp } from "../../src/commit/schemas.ts";
import { BUILTIN_EVENT_TYPES } from "../../src/event-types/builtin.ts";
import { webhooksOf } from "../../src/event-types/webhooks-doc.ts";
import type { AppEnv } from "../../src/http/context.ts";
import { caseInsensitive } from "../../src/http/openapi/convert.ts";
import { buildOpenApi } from "../../src/http/openapi/document.ts";
import { publicRoute } from "../../src/http/openapi/route.ts";
import { EndpointCreateSchema, TokenCreateSchema } from "../../src/http/schemas.ts";
import { type Checked, OpenApiChecker, routeDrift } from "../helpers/openapi-check.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

// biome-ignore lint/suspicious/noExplicitAny: the document is read freely
type Doc = any;

/** Every route DESIGN §3 names, with who may call it. */
const CONTRACT: [method: string, path: string, scopes: string[]][] = [
  ["post", "/v1/commits", ["commit"]],
  ["put", "/v1/records/{collection}/{id}", ["commit"]],
  ["get", "/v1/records/{collection}/{id}", ["read", "commit", "propose", "approve"]],
  ["get", "/v1/records/{collection}", ["read", "commit", "propose", "approve"]],
  ["get", "/v1/records/{collection}/{id}/history", ["read", "commit"]],
  ["get", "/v1/ledger", ["read"]],
  ["get", "/v1/ledger/commits", ["read"]],
  ["post", "/v1/endpoints", ["admin"]],
  ["get", "/v1/endpoints", ["read"]],
  ["get", "/v1/endpoints/{id}", ["read"]],
  ["patch", "/v1/endpoints/{id}", ["admin"]],
  ["delete", "/v1/endpoints/{id}", ["admin"]],
  ["post", "/v1/endpoints/{id}/enable", ["admin"]],
  ["post", "/v1/endpoints/{id}/recover", ["admin"]],
  ["post", "/v1/endpoints/{id}/test", ["admin"]],
  ["post", "/v1/endpoints/{id}/rotate-secret", ["admin"]],
  ["get", "/v1/endpoints/{id}/secret", ["admin"]],
  ["post", "/v1/endpoints/{id}/poll", ["consume"]],
  ["post", "/v1/endpoints/{id}/ack", ["consume"]],
  ["get", "/v1/endpoints/{id}/stream", ["consume"]],
  ["get", "/v1/events", ["read"]],
  ["get", "/v1/events/{id}", ["read"]],
  ["get", "/v1/deliveries", ["read"]],
  ["get", "/v1/deliveries/{id}", ["read"]],
  ["get", "/v1/deliveries/{id}/attempts", ["read"]],
  ["post", "/v1/deliveries/{id}/replay", ["admin"]],
  ["post", "/v1/deliveries/{id}/cancel", ["admin"]],
  ["post", "/v1/deliveries/replay", ["admin"]],
  ["post", "/v1/tokens", ["admin"]],
  ["get", "/v1/tokens", ["read"]],
  ["delete", "/v1/tokens/{id}", ["admin"]],
  ["get", "/v1/stats", ["read"]],
  ["put", "/v1/event-types/{type}", ["admin"]],
  ["get", "/v1/event-types", ["read"]],
  ["get", "/v1/event-types/{type}", ["read"]],
  ["delete", "/v1/event-types/{type}", ["admin"]],
  ["post", "/v1/proposals", ["propose"]],
  ["get", "/v1/proposals", ["propose", "approve", "read"]],
  ["get", "/v1/proposals/{id}", ["propose", "approve", "read"]],
  ["post", "/v1/proposals/{id}/approve", ["approve"]],
  ["post", "/v1/proposals/{id}/reject", ["approve"]],
  ["post", "/mcp", ["read", "commit", "propose", "approve", "consume"]],
  ["get", "/mcp", []],
  ["delete", "/mcp", []],
  ["get", "/metrics", ["read"]],
  ["get", "/healthz", []],
  ["get", "/readyz", []],
  ["get", "/openapi.json", []],
  ["get", "/docs", []],
  ["get", "/snippet/verify.ts", []],
  ["get", "/snippet/verify.js", []],
  ["get", "/", []],
];

/** Additive routes (docs/design.md, "outboxd extension"). */
const EXTENSIONS: [method: string, path: string, scopes?: string[]][] = [
  ["get", "/v1/whoami", ["read", "commit", "propose", "approve", "consume"]],
  ["get", "/v1/stats/history"],
  ["get", "/v1/attempts"],
];

let server: TestServer;
let receiver: TestReceiver;
let failing: TestReceiver;
let doc: Doc;
let checker: OpenApiChecker;

const operations = (): { method: string; path: string; op: Doc }[] =>
  Object.entries<Doc>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Doc>(item).map(([method, op]) => ({ method, path, op })),
  );
const resolve = (schema: Doc): Doc =>
  schema?.$ref ? doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema;
const bodySchema = (method: string, path: string): Doc =>
  resolve(doc.paths[path][method].requestBody.content["application/json"].schema);
/** A schema converted here, on its own, as the document should hold it. */
function direct(schema: v.GenericSchema, definitions: Record<string, v.GenericSchema> = {}): Doc {
  const converted = toJsonSchema(schema, {
    target: "draft-2020-12",
    typeMode: "input",
    errorMode: "ignore",
    definitions,
  });
  const { $schema: _schema, $defs: _defs, ...rest } = converted;
  return JSON.parse(JSON.stringify(rest).replaceAll("#/$defs/", "#/components/schemas/"));
}

beforeAll(async () => {
  server = await startServer({ OUTBOXD_RETRY_BASE: "50ms", OUTBOXD_RETRY_CAP: "1s" });
  receiver = startReceiver();
  failing = startReceiver(() => new Response("upstream exploded", { status: 500 }));
  const response = await fetch(`${server.url}/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("application/json");
  doc = await response.json();
  checker = new OpenApiChecker(doc);
});
afterAll(async () => {
  await server.stop();
  await receiver.stop();
  await failing.stop();
});

describe("/openapi.json", () => {
  test("is OpenAPI 3.1 with a bearer security scheme and the problem+json schema", () => {
    expect(doc.openapi).toStartWith("3.1");
    expect(doc.info.title).toBe("outboxd");
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    const problem = doc.components.schemas.Problem;
    expect(problem.required).toEqual(["type", "title", "status", "detail"]);
    expect(Object.keys(problem.properties)).toEqual(
      expect.arrayContaining(["type", "title", "status", "detail", "errors", "currentVersion"]),
    );
    for (const response of Object.values<Doc>(doc.components.responses)) {
      expect(response.content["application/problem+json"].schema.$ref).toBe("#/components/schemas/Problem");
    }
  });

  test("every route the app serves is documented, and only those", () => {
    const { undocumented, unserved } = routeDrift(server.outboxd.http.routes, doc);
    if (undocumented.length > 0) {
      throw new Error(
        `served but not in /openapi.json: ${undocumented.join(", ")}. ` +
          "Put scopedRoute(deps, {...}) or publicRoute({...}) (src/http/openapi/route.ts) before the " +
          "handler; see the comment at the top of src/http/app.ts.",
      );
    }
    expect(unserved).toEqual([]);
  });

  test("a route added without its documentation is caught", async () => {
    const app = new Hono<AppEnv>();
    app.get(
      "/documented/:id",
      publicRoute({
        tag: "T",
        summary: "s",
        answers: { 200: { description: "d", contentType: "text/plain" } },
      }),
      (c) => c.text("ok"),
    );
    app.post("/forgotten", (c) => c.text("ok"));
    const { undocumented, unserved } = routeDrift(app.routes, await buildOpenApi(app));
    expect(undocumented).toEqual(["post /forgotten"]);
    expect(unserved).toEqual([]);
  });

  test("every operation has a summary, its scope and security, and a schema for every JSON answer", () => {
    for (const { method, path, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(`${where}: ${typeof op.summary}`).toBe(`${where}: string`);
      const scopes: string[] = op["x-outboxd-scope"];
      expect(Array.isArray(scopes)).toBe(true);
      if (scopes.length === 0) {
        expect(op.security).toEqual([]);
        expect(op.description).toContain("Public");
      } else {
        expect(op.security).toEqual([{ bearer: [] }]);
        for (const scope of scopes) expect(op.description).toContain(`\`${scope}\``);
        expect(op.responses["401"].$ref).toBe("#/components/responses/Unauthorized");
        expect(op.responses["403"].$ref).toBe("#/components/responses/Forbidden");
        expect(op.responses["429"].$ref).toBe("#/components/responses/RateLimited");
        expect(op.responses["503"].$ref).toBe("#/components/responses/Unavailable");
      }
      for (const [status, response] of Object.entries<Doc>(op.responses)) {
        if (response.$ref) {
          expect(doc.components.responses[response.$ref.split("/").pop()]).toBeDefined();
          continue;
        }
        for (const [type, media] of Object.entries<Doc>(response.content ?? {})) {
          if (type.endsWith("json"))
            expect(`${where} ${status}: ${media.schema !== undefined}`).toBe(`${where} ${status}: true`);
        }
      }
    }
  });

  test("every route of DESIGN §3 is there with its scopes; the outboxd extensions are marked", () => {
    for (const [method, path, scopes] of CONTRACT) {
      const op = doc.paths[path]?.[method];
      if (!op) throw new Error(`${method.toUpperCase()} ${path} is missing from /openapi.json`);
      expect(`${method} ${path}: ${op["x-outboxd-scope"]}`).toBe(`${method} ${path}: ${scopes}`);
      expect(op["x-outboxd-extension"]).toBeUndefined();
    }
    for (const [method, path, scopes] of EXTENSIONS) {
      const op = doc.paths[path]?.[method];
      expect(op["x-outboxd-extension"]).toBe(true);
      expect(op["x-outboxd-scope"]).toEqual(scopes ?? ["read"]);
      expect(op.description).toContain("outboxd extension");
    }
  });

  test("request bodies are the valibot schemas that validate them", () => {
    const commit = bodySchema("post", "/v1/commits");
    expect(commit).toEqual(direct(CommitSchema, { RecordWrite: RecordWriteSchema, Event: EventSchema }));
    expect(commit.additionalProperties).toBe(false);
    expect(Object.keys(commit.properties)).toEqual(["records", "events"]);
    expect(commit.properties.records.anyOf).toContainEqual({ type: "null" });

    const event = resolve(commit.properties.events.anyOf[0].items);
    expect(event.additionalProperties).toBe(false);
    expect(event.required).toEqual(["type"]);
    expect(Object.keys(event.properties)).toEqual(Object.keys(EventSchema.entries));
    const record = resolve(commit.properties.records.anyOf[0].items);
    expect(record.required).toEqual(["collection", "id"]);
    expect(record.properties.collection.pattern).toBe(String.raw`^(?!\.\.?$)[A-Za-z0-9._:-]{1,128}$`);
    // The JSON-object custom schema becomes an object, not "anything".
    expect(record.properties.data.anyOf).toEqual([{ type: "object" }, { type: "null" }]);

    const put = bodySchema("put", "/v1/records/{collection}/{id}");
    expect(put.required).toEqual(["data"]);
    expect(put.properties.data).toEqual({ type: "object" });

    const endpoint = bodySchema("post", "/v1/endpoints");
    // `url` is required of webhook endpoints only (a pull endpoint refuses it): the route checks.
    expect(endpoint.required ?? []).toEqual([]);
    expect(Object.keys(endpoint.properties)).toEqual(Object.keys(EndpointCreateSchema.entries));
    expect(endpoint.properties.secret.anyOf[0].pattern).toStartWith("^whsec_");

    const token = bodySchema("post", "/v1/tokens");
    expect(token).toEqual(direct(TokenCreateSchema));
    expect(token.properties.scopes.items.enum).toEqual([
      "read",
      "commit",
      "propose",
      "approve",
      "consume",
      "admin",
    ]);

    expect(bodySchema("post", "/v1/deliveries/replay").properties.status).toEqual({ const: "dead" });
    expect(doc.paths["/v1/deliveries/{id}/replay"].post.requestBody.required).toBe(false);
    expect(doc.paths["/v1/commits"].post.requestBody.required).toBe(true);

    // Every route that reads a body answers 400 and 422 with the problem schema.
    for (const { op } of operations().filter(({ op }) => op.requestBody)) {
      expect(op.responses["422"].$ref).toBe("#/components/responses/Invalid");
      expect(op.responses["400"].$ref).toBe("#/components/responses/MalformedJson");
    }
  });

  test("timestamps: the case-insensitive regex is spelled out and agrees with the validator", () => {
    const schema = doc.components.schemas.Timestamp;
    expect(schema.format).toBe("date-time");
    const pattern = new RegExp(schema.pattern);
    for (const text of ["2026-11-29T10:00:00Z", "2026-11-29t10:00:00.123z", "2026-11-29T10:00:00+02:00"]) {
      expect(pattern.test(text)).toBe(true);
      expect(v.is(Timestamp, text)).toBe(true);
    }
    for (const text of ["2026-11-29 10:00:00Z", "2026-11-29T10:00:00", "x2026-11-29T10:00:00Z"]) {
      expect(pattern.test(text)).toBe(false);
      expect(v.is(Timestamp, text)).toBe(false);
    }
    expect(caseInsensitive("^[a-z]+\\d\\u00e9x$")).toBe("^[a-zA-Z]+\\d\\u00e9[xX]$");
  });

  test("query parameters come from the query schemas, input side", () => {
    const params = doc.paths["/v1/deliveries"].get.parameters;
    const byName = Object.fromEntries(params.map((p: Doc) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(["after", "endpoint", "limit", "reason", "status"]);
    expect(byName.status).toMatchObject({
      in: "query",
      required: false,
      schema: { enum: ["pending", "delivered", "dead"] },
    });
    // limit is read as digits and turned into a number: an integer with its bounds, so a typed
    // client sends a number (the same digits on the wire).
    expect(byName.limit.schema).toEqual({ type: "integer", minimum: 1, maximum: 500 });
    const record = doc.paths["/v1/records/{collection}/{id}"].get.parameters;
    expect(record.map((p: Doc) => [p.name, p.in, p.required])).toEqual([
      ["collection", "path", true],
      ["id", "path", true],
    ]);
    const headers = doc.paths["/v1/commits"].post.parameters.map((p: Doc) => `${p.in}:${p.name}`);
    expect(headers).toEqual(["header:Idempotency-Key"]);
    expect(doc.paths["/v1/records/{collection}/{id}"].put.parameters.map((p: Doc) => p.name)).toEqual(
      expect.arrayContaining(["If-Match", "If-None-Match"]),
    );
  });

  test("operation ids are unique", () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("every example follows the schema it illustrates", () => {
    let examples = 0;
    for (const { method, path, op } of operations()) {
      for (const [status, response] of Object.entries<Doc>(op.responses)) {
        for (const [type, media] of Object.entries<Doc>(response.content ?? {})) {
          if (media.example === undefined) continue;
          checker.checkBody(method, path.replace(/\{[^}]+\}/g, "x"), Number(status), type, media.example);
          examples++;
        }
      }
    }
    expect(examples).toBeGreaterThan(25);
    checker.seen.clear();
  });
});

describe("real answers follow the documented schemas", () => {
  /** A request whose answer is checked against /openapi.json; `token` null sends none. */
  const call = async (
    method: string,
    path: string,
    {
      body,
      token,
      headers = {},
    }: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Checked> => {
    const bearer = token === undefined ? server.token : token;
    const response = await fetch(server.url + path, {
      method,
      headers: {
        ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return checker.check(method, path, response);
  };
  const expectStatus = (answer: Checked, status: number): Checked["body"] => {
    if (answer.status !== status) {
      throw new Error(
        `expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body).slice(0, 400)}`,
      );
    }
    return answer.body;
  };

  test("a workload of every route: commits, records, endpoints, events, deliveries, tokens, stats, errors", async () => {
    // Tokens, and the problems of a missing, unknown or too weak one.
    const reader = expectStatus(
      await call("POST", "/v1/tokens", { body: { name: "reader", scopes: ["read"] } }),
      201,
    );
    expectStatus(await call("GET", "/v1/tokens?limit=10"), 200);
    expectStatus(await call("GET", "/v1/stats", { token: null }), 401);
    expectStatus(await call("GET", "/v1/stats", { token: "otk_unknown" }), 401);
    expectStatus(await call("POST", "/v1/commits", { token: reader.token, body: { events: [] } }), 403);
    expectStatus(await call("POST", "/v1/tokens", { body: { name: "", scopes: ["root"] } }), 422);

    // The event-type catalog (DESIGN §9), and a commit its schema refuses.
    const refund = {
      description: "A refund was issued.",
      schema: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] },
    };
    expectStatus(await call("PUT", "/v1/event-types/refund.issued", { body: refund }), 201);
    expectStatus(
      await call("PUT", "/v1/event-types/refund.issued", { body: { ...refund, deprecated: true } }),
      200,
    );
    expectStatus(await call("PUT", "/v1/event-types/refund.issued", { body: { schema: { type: 7 } } }), 422);
    expectStatus(await call("GET", "/v1/event-types"), 200);
    expectStatus(await call("GET", "/v1/event-types/refund.issued"), 200);
    expectStatus(await call("GET", "/v1/event-types/refund.unknown"), 404);
    expectStatus(
      await call("POST", "/v1/commits", {
        body: { events: [{ type: "refund.issued", aggregate: "r/1", payload: {} }] },
      }),
      422,
    );
    expectStatus(await call("DELETE", "/v1/event-types/refund.issued"), 204);
    expectStatus(await call("DELETE", "/v1/event-types/refund.issued"), 404);

    // Proposals (DESIGN §10): approved, rejected and conflicted, and the problems on the way.
    const agent = expectStatus(
      await call("POST", "/v1/tokens", { body: { name: "agent", scopes: ["propose"] } }),
      201,
    );
    const propose = async (id: string, expectedVersion: number | undefined) =>
      call("POST", "/v1/proposals", {
        token: agent.token,
        body: {
          summary: `approve ${id}`,
          commit: {
            records: [{ collection: "returns", id, expectedVersion, data: { status: "approved" } }],
            events: [{ type: "return.approved", payload: { id } }],
          },
        },
      });
    const approved = expectStatus(await propose("p-1", 0), 201);
    const rejected = expectStatus(await propose("p-2", 0), 201);
    const conflicted = expectStatus(await propose("p-1", 0), 201);
    expectStatus(await propose("p-3", undefined), 422);
    expectStatus(await call("GET", "/v1/proposals?status=pending"), 200);
    expectStatus(await call("GET", `/v1/proposals/${approved.id}`, { token: agent.token }), 200);
    expectStatus(await call("GET", "/v1/proposals/prp_missing"), 404);
    expectStatus(await call("POST", `/v1/proposals/${approved.id}/approve`, { token: agent.token }), 403);
    expectStatus(
      await call("POST", `/v1/proposals/${approved.id}/approve`, { body: { reason: "photos checked" } }),
      200,
    );
    expectStatus(await call("POST", `/v1/proposals/${rejected.id}/reject`, { body: { reason: "no" } }), 200);
    expectStatus(await call("POST", `/v1/proposals/${rejected.id}/approve`), 409);
    expectStatus(await call("POST", `/v1/proposals/${conflicted.id}/approve`), 409);
    const after = expectStatus(await call("GET", `/v1/proposals/${conflicted.id}`), 200);
    expect(after.status).toBe("conflicted");
    expect(after.result.status).toBe(409);

    // Endpoints.
    const good = expectStatus(
      await call("POST", "/v1/endpoints", {
        body: { url: receiver.url, eventTypes: ["return.*"], description: "returns" },
      }),
      201,
    );
    const bad = expectStatus(
      await call("POST", "/v1/endpoints", { body: { url: failing.url, eventTypes: ["invoice.*"] } }),
      201,
    );
    expectStatus(await call("POST", "/v1/endpoints", { body: "{not json" }), 400);
    expectStatus(await call("POST", "/v1/endpoints", { body: { url: receiver.url, extra: 1 } }), 422);
    expectStatus(await call("POST", "/v1/endpoints", { body: `"${"x".repeat(1024 * 1024 + 10)}"` }), 413);
    expectStatus(await call("GET", "/v1/endpoints"), 200);
    expectStatus(await call("GET", `/v1/endpoints/${good.id}`, { token: reader.token }), 200);
    expectStatus(await call("GET", "/v1/endpoints/ep_missing"), 404);
    expectStatus(
      await call("PATCH", `/v1/endpoints/${good.id}`, { body: { description: "returns service" } }),
      200,
    );
    expectStatus(await call("POST", `/v1/endpoints/${good.id}/enable`), 200);
    expectStatus(
      await call("POST", `/v1/endpoints/${good.id}/recover`, { body: { since: "2026-01-01T00:00:00Z" } }),
      200,
    );
    expectStatus(await call("POST", `/v1/endpoints/${good.id}/rotate-secret`), 200);
    expectStatus(await call("GET", `/v1/endpoints/${good.id}/secret`), 200);
    expectStatus(await call("POST", `/v1/endpoints/${good.id}/test`), 200);

    // Pull endpoints (DESIGN §12): poll, ack, and the first message of a stream.
    const consumer = expectStatus(
      await call("POST", "/v1/tokens", { body: { name: "consumer", scopes: ["consume"] } }),
      201,
    );
    const pull = expectStatus(await call("POST", "/v1/endpoints", { body: { kind: "pull" } }), 201);
    const toPull = {
      events: [{ type: "return.approved", aggregate: "pull/1", payload: {}, endpoints: [pull.id] }],
    };
    expectStatus(await call("POST", "/v1/commits", { body: toPull }), 201);
    const polled = expectStatus(
      await call("POST", `/v1/endpoints/${pull.id}/poll`, { token: consumer.token, body: { max: 10 } }),
      200,
    );
    const [leased] = polled.data;
    expectStatus(
      await call("POST", `/v1/endpoints/${pull.id}/ack`, {
        token: consumer.token,
        body: { acks: [{ deliveryId: leased.deliveryId, leaseToken: leased.leaseToken }] },
      }),
      200,
    );
    expectStatus(await call("POST", "/v1/commits", { body: toPull }), 201);
    const streaming = new AbortController();
    const stream = await fetch(`${server.url}/v1/endpoints/${pull.id}/stream`, {
      headers: { authorization: `Bearer ${consumer.token}` },
      signal: streaming.signal,
    });
    const events = (stream.body as ReadableStream<Uint8Array>).getReader();
    let message = "";
    while (!/event: delivery[\s\S]*\n\n/.test(message))
      message += new TextDecoder().decode((await events.read()).value);
    streaming.abort();
    expect(message).toStartWith(": connected\n\nevent: delivery\n");
    expectStatus(
      await checker.check("GET", `/v1/endpoints/${pull.id}/stream`, new Response(message, stream)),
      200,
    );

    // Commits and records.
    const commit = expectStatus(
      await call("POST", "/v1/commits", {
        body: {
          records: [{ collection: "returns", id: "r-1", expectedVersion: 0, data: { status: "approved" } }],
          events: [{ type: "return.approved", payload: { returnId: "r-1" } }],
        },
        headers: { "idempotency-key": "k-1" },
      }),
      201,
    );
    const again = await call("POST", "/v1/commits", {
      body: {
        records: [{ collection: "returns", id: "r-1", expectedVersion: 0, data: { status: "approved" } }],
        events: [{ type: "return.approved", payload: { returnId: "r-1" } }],
      },
      headers: { "idempotency-key": "k-1" },
    });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const conflict = expectStatus(
      await call("POST", "/v1/commits", {
        body: { records: [{ collection: "returns", id: "r-1", expectedVersion: 7, data: {} }] },
      }),
      409,
    );
    expect(conflict.currentVersion).toBe(1);
    expectStatus(
      await call("POST", "/v1/commits", { body: { records: [{ collection: "bad name", id: "x" }] } }),
      422,
    );
    expectStatus(await call("PUT", "/v1/records/returns/r-2", { body: { data: { status: "new" } } }), 201);
    expectStatus(
      await call("PUT", "/v1/records/returns/r-2", {
        body: { data: { status: "seen" } },
        headers: { "if-match": '"1"' },
      }),
      200,
    );
    expectStatus(
      await call("PUT", "/v1/records/returns/r-2", { body: { data: {} }, headers: { "if-match": '"9"' } }),
      412,
    );
    expectStatus(await call("GET", "/v1/records/returns/r-1", { token: reader.token }), 200);
    expectStatus(await call("GET", "/v1/records/returns?limit=1"), 200);
    expectStatus(await call("GET", "/v1/records/returns?limit=0"), 422);
    expectStatus(
      await call("POST", "/v1/commits", {
        body: { records: [{ collection: "returns", id: "r-2", delete: true }] },
      }),
      201,
    );
    expect(expectStatus(await call("GET", "/v1/records/returns/r-2"), 404).currentVersion).toBe(3);

    // Events and deliveries: one delivered, one dead past its deadline.
    const eventId = commit.events[0].id;
    const deliveryId = commit.events[0].deliveries[0].id;
    await waitFor("the delivery to be delivered", async () => {
      return (await call("GET", `/v1/deliveries/${deliveryId}`)).body.status === "delivered";
    });
    const invoice = expectStatus(
      await call("POST", "/v1/commits", {
        body: {
          records: [{ collection: "invoices", id: "i-1", data: { amount: 5 } }],
          events: [{ type: "invoice.issued", payload: { id: "i-1" }, deliverWithin: "1s" }],
        },
      }),
      201,
    );
    const deadId = invoice.events[0].deliveries[0].id;
    await waitFor("the invoice delivery to be dead", async () => {
      return (await call("GET", `/v1/deliveries/${deadId}`)).body.status === "dead";
    });
    expectStatus(await call("GET", "/v1/events?limit=5"), 200);
    expectStatus(await call("GET", "/v1/events?aggregate=returns/r-1"), 200);
    expectStatus(await call("GET", "/v1/events?after=nope"), 422);
    expectStatus(await call("GET", `/v1/events/${eventId}`), 200);
    expectStatus(await call("GET", "/v1/events/missing"), 404);
    expectStatus(await call("GET", "/v1/deliveries?status=dead"), 200);
    expectStatus(await call("GET", "/v1/deliveries?status=lost"), 422);
    expectStatus(await call("GET", `/v1/deliveries/${deliveryId}/attempts`), 200);
    expectStatus(await call("GET", "/v1/deliveries/dlv_missing/attempts"), 404);
    expectStatus(await call("POST", `/v1/deliveries/${deliveryId}/replay`), 409);
    expectStatus(
      await call("POST", `/v1/deliveries/${deadId}/replay`, { body: { deliverWithin: "1s" } }),
      200,
    );
    await waitFor("the replayed delivery to be dead again", async () => {
      return (await call("GET", `/v1/deliveries/${deadId}`)).body.status === "dead";
    });
    expectStatus(
      await call("POST", "/v1/deliveries/replay", {
        body: { status: "dead", endpoint: bad.id, deliverWithin: "1h" },
      }),
      200,
    );
    expectStatus(await call("POST", "/v1/deliveries/replay", { body: { status: "pending" } }), 422);
    const scheduled = expectStatus(
      await call("POST", "/v1/commits", {
        body: {
          events: [
            {
              type: "invoice.reminded",
              aggregate: "invoices/i-1",
              endpoints: [bad.id],
              deliverAfter: new Date(Date.now() + 86_400_000).toISOString(),
            },
          ],
        },
      }),
      201,
    ).events[0].deliveries[0].id;
    expectStatus(await call("POST", `/v1/deliveries/${scheduled}/cancel`), 200);
    expectStatus(await call("POST", `/v1/deliveries/${scheduled}/cancel`), 409);

    // Operations and the public routes.
    expectStatus(await call("GET", "/v1/stats"), 200);
    expectStatus(await call("GET", "/v1/stats/history"), 200);
    expectStatus(await call("GET", "/v1/attempts?limit=5"), 200);
    expectStatus(await call("GET", "/v1/attempts?after=x"), 422);
    // The ledger.
    expectStatus(await call("GET", "/v1/records/returns/r-1/history"), 200);
    expectStatus(await call("GET", "/v1/records/returns/r-1/history?limit=1&after=2"), 200);
    expectStatus(await call("GET", "/v1/records/returns/never/history"), 404);
    expectStatus(await call("GET", "/v1/records/returns/r-1/history?after=x"), 422);
    expectStatus(await call("GET", "/v1/ledger"), 200);
    expectStatus(await call("GET", "/v1/ledger/commits?limit=2"), 200);
    expectStatus(await call("GET", "/v1/ledger/commits?after=-1"), 422);
    expectStatus(await call("GET", "/metrics"), 200);
    for (const path of [
      "/healthz",
      "/readyz",
      "/openapi.json",
      "/docs",
      "/",
      "/snippet/verify.ts",
      "/snippet/verify.js",
    ]) {
      expectStatus(await call("GET", path, { token: null }), 200);
    }

    // MCP and who the token is.
    expectStatus(await call("GET", "/v1/whoami"), 200);
    expectStatus(
      await call("POST", "/mcp", {
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        },
        headers: { accept: "application/json, text/event-stream" },
      }),
      200,
    );
    expectStatus(
      await call("POST", "/mcp", {
        body: { jsonrpc: "2.0", method: "notifications/initialized" },
        headers: { accept: "application/json, text/event-stream" },
      }),
      202,
    );
    expectStatus(await call("GET", "/mcp", { token: null }), 405);
    expectStatus(await call("DELETE", "/mcp", { token: null }), 405);

    // Deletions.
    expectStatus(await call("DELETE", `/v1/endpoints/${bad.id}`), 200);
    expectStatus(await call("DELETE", `/v1/endpoints/${bad.id}`), 404);
    expectStatus(await call("DELETE", `/v1/tokens/${reader.id}`), 200);
    expectStatus(await call("DELETE", `/v1/tokens/${reader.id}`), 404);

    // Every documented operation answered at least once with success, and the problems were seen.
    const succeeded = new Set(
      // A route's own documented answer counts (GET /mcp's only answer is 405: POST only).
      [...checker.seen]
        .filter((s) => /\s2\d\d$/.test(s) || s.startsWith("get /mcp 405") || s.startsWith("delete /mcp 405"))
        .map((s) => s.replace(/\s\d+$/, "")),
    );
    const untried = operations()
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .filter((op) => !succeeded.has(op.replace(/^\S+/, (m) => m.toLowerCase())));
    if (untried.length > 0) {
      throw new Error(
        `documented but never answered 2xx in this workload: ${untried.join(", ")}. ` +
          "Add a call to each in the workload above, so its real answers are checked against its schemas.",
      );
    }
    const problems = new Set(
      [...checker.seen].map((s) => Number(s.split(" ").pop())).filter((s) => s >= 400 && s !== 405),
    );
    expect([...problems].sort()).toEqual([400, 401, 403, 404, 409, 412, 413, 422]);
  });

  test("the rate limit's 429 follows the problem schema too", async () => {
    const limited = await startServer({ OUTBOXD_RATE_LIMIT: "1", OUTBOXD_RATE_BURST: "1" });
    try {
      let status = 0;
      for (let i = 0; i < 20 && status !== 429; i++) {
        const response = await fetch(`${limited.url}/v1/stats`, {
          headers: { authorization: `Bearer ${limited.token}` },
        });
        status = (await checker.check("GET", "/v1/stats", response)).status;
      }
      expect(status).toBe(429);
    } finally {
      await limited.stop();
    }
  });
});

describe("/docs", () => {
  test("answers 200 HTML without a token, self-contained, with every route and schema", async () => {
    const response = await fetch(`${server.url}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/html");
    const page = await response.text();
    expect(page).toStartWith("<!doctype html>");
    // Works offline: nothing is loaded from elsewhere, and no script at all.
    expect(page).not.toContain("<script");
    expect(page).not.toMatch(/<link[^>]+stylesheet/);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const { method, path } of operations()) {
      expect(page).toContain(`${method.toUpperCase()}</code> ${path}</a>`);
    }
    for (const name of Object.keys(doc.components.schemas)) expect(page).toContain(`id="schema-${name}"`);
    expect(page).toContain("outboxd extension");
  });

  test("the document is the one built in process, and /openapi.json needs no token either", async () => {
    const response = await fetch(`${server.url}/openapi.json`, { headers: { authorization: "Bearer nope" } });
    expect(response.status).toBe(200);
    // Plus the webhooks map of the registered event types (the built-in ones only here;
    // test/http/event-types.test.ts).
    const built = await buildOpenApi(server.outboxd.http);
    expect(await response.json()).toEqual({
      ...JSON.parse(JSON.stringify(built)),
      webhooks: JSON.parse(JSON.stringify(webhooksOf(BUILTIN_EVENT_TYPES))),
    });
  });
});
