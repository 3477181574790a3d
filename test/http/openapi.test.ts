// GET /openapi.json and GET /docs (DESIGN §3): every route of the contract is documented with
// its method, scope and problems; request bodies and queries are the valibot schemas that
// validate them; the document lists exactly the routes the app serves; the examples have the
// shape of real answers; both pages are public.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { buildOpenApi, caseInsensitive, ROUTES } from "../../src/http/openapi.ts";
import {
  CommitSchema,
  EndpointCreateSchema,
  EventSchema,
  RecordWriteSchema,
  Timestamp,
  TokenCreateSchema,
} from "../../src/http/schemas.ts";
import { expectStatus } from "../helpers/assertions.ts";
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
  ["post", "/v1/endpoints", ["admin"]],
  ["get", "/v1/endpoints", ["read"]],
  ["get", "/v1/endpoints/{id}", ["read"]],
  ["patch", "/v1/endpoints/{id}", ["admin"]],
  ["delete", "/v1/endpoints/{id}", ["admin"]],
  ["post", "/v1/endpoints/{id}/enable", ["admin"]],
  ["post", "/v1/endpoints/{id}/test", ["admin"]],
  ["post", "/v1/endpoints/{id}/rotate-secret", ["admin"]],
  ["get", "/v1/endpoints/{id}/secret", ["admin"]],
  ["get", "/v1/events", ["read"]],
  ["get", "/v1/events/{id}", ["read"]],
  ["get", "/v1/deliveries", ["read"]],
  ["get", "/v1/deliveries/{id}", ["read"]],
  ["get", "/v1/deliveries/{id}/attempts", ["read"]],
  ["post", "/v1/deliveries/{id}/replay", ["admin"]],
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
const EXTENSIONS: [method: string, path: string][] = [
  ["get", "/v1/stats/history"],
  ["get", "/v1/attempts"],
];

let server: TestServer;
let receiver: TestReceiver;
let doc: Doc;

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
  server = await startServer();
  receiver = startReceiver();
  const response = await fetch(`${server.url}/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("application/json");
  doc = await response.json();
});
afterAll(async () => {
  await server.stop();
  await receiver.stop();
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

  test("every route of DESIGN §3 is there with its method, scope and security", () => {
    for (const [method, path, scopes] of CONTRACT) {
      const op = doc.paths[path]?.[method];
      if (!op) throw new Error(`${method.toUpperCase()} ${path} is missing from /openapi.json`);
      expect(op.summary).toBeTruthy();
      expect(op["x-outboxd-scope"]).toEqual(scopes);
      expect(op["x-outboxd-extension"]).toBeUndefined();
      if (scopes.length === 0) {
        expect(op.security).toEqual([]);
        expect(op.description).toContain("Public");
        expect(op.responses["401"]).toBeUndefined();
      } else {
        expect(op.security).toEqual([{ bearer: [] }]);
        for (const scope of scopes) expect(op.description).toContain(`\`${scope}\``);
        expect(op.responses["401"].$ref).toBe("#/components/responses/Unauthorized");
        expect(op.responses["403"].$ref).toBe("#/components/responses/Forbidden");
      }
    }
  });

  test("the outboxd extensions are there, marked, with the read scope", () => {
    for (const [method, path] of EXTENSIONS) {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      expect(op["x-outboxd-extension"]).toBe(true);
      expect(op["x-outboxd-scope"]).toEqual(["read"]);
      expect(op.description).toContain("outboxd extension");
    }
    const documented = Object.entries<Doc>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    const known = [...CONTRACT, ...EXTENSIONS].map(([method, path]) => `${method} ${path}`);
    expect(documented.sort()).toEqual(known.sort());
  });

  test("it lists exactly the routes the app serves", () => {
    const served = new Set(
      server.outboxd.http.routes
        .filter((r) => r.method !== "ALL")
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z]+)/g, "{$1}")}`),
    );
    const documented = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
    expect([...served].filter((r) => !documented.has(r))).toEqual([]);
    expect([...documented].filter((r) => !served.has(r))).toEqual([]);
  });

  test("request bodies are the valibot schemas that validate them", () => {
    const commit = bodySchema("post", "/v1/commits");
    expect(commit).toEqual(direct(CommitSchema, { RecordWrite: RecordWriteSchema, Event: EventSchema }));
    expect(commit.type).toBe("object");
    expect(commit.additionalProperties).toBe(false);
    expect(Object.keys(commit.properties)).toEqual(["records", "events"]);
    expect(commit.properties.records.anyOf).toContainEqual({ type: "null" });

    const event = resolve(commit.properties.events.anyOf[0].items);
    expect(event.additionalProperties).toBe(false);
    expect(event.required).toEqual(["type"]);
    expect(Object.keys(event.properties)).toEqual([
      "id",
      "type",
      "aggregate",
      "payload",
      "deliverBy",
      "deliverWithin",
      "deliverAfter",
      "endpoints",
    ]);
    const record = resolve(commit.properties.records.anyOf[0].items);
    expect(record.required).toEqual(["collection", "id"]);
    expect(record.properties.collection.pattern).toBe("^[A-Za-z0-9._:-]{1,128}$");
    // The JSON-object custom schema becomes an object, not "anything".
    expect(record.properties.data.anyOf).toEqual([{ type: "object" }, { type: "null" }]);

    const put = bodySchema("put", "/v1/records/{collection}/{id}");
    expect(put.required).toEqual(["data"]);
    expect(put.properties.data).toEqual({ type: "object" });

    const endpoint = bodySchema("post", "/v1/endpoints");
    expect(endpoint.required).toEqual(["url"]);
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

    // Every route that reads a body documents it, and answers 422 with the problem schema.
    for (const route of ROUTES.filter((r) => r.body)) {
      const op = doc.paths[route.path][route.method];
      expect(op.requestBody).toBeDefined();
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
    // limit is a string in the query (the transform to a number is the output side).
    expect(byName.limit.schema).toEqual({ type: "string", pattern: "^\\d+$" });
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
    const ids = Object.values<Doc>(doc.paths).flatMap((item) =>
      Object.values<Doc>(item).map((op) => op.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("the examples have the shape of real answers", async () => {
    const endpoint = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: receiver.url, eventTypes: ["return.*"] }),
      201,
    );
    const commit = expectStatus(
      await server.request("POST", "/v1/commits", {
        records: [{ collection: "returns", id: "r-1", data: { status: "approved" } }],
        events: [{ type: "return.approved", payload: { returnId: "r-1" } }],
      }),
      201,
    );
    const deliveryId = commit.events[0].deliveries[0].id;
    await waitFor("the delivery", async () => {
      const d = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}`), 200);
      return d.status === "delivered";
    });
    const example = (method: string, path: string) => {
      const op = doc.paths[path][method];
      const status = Object.keys(op.responses).find((s) => s.startsWith("2")) as string;
      return op.responses[status].content["application/json"].example;
    };
    const keys = (value: Doc) => Object.keys(value).sort();
    const same = (method: string, path: string, real: Doc) => {
      const expected = example(method, path);
      expect(`${method} ${path}: ${keys(real)}`).toBe(`${method} ${path}: ${keys(expected)}`);
      if (Array.isArray(real.data)) expect(keys(real.data[0])).toEqual(keys(expected.data[0]));
    };
    same("post", "/v1/endpoints", endpoint);
    same("post", "/v1/commits", commit);
    expect(keys(commit.events[0])).toEqual(keys(example("post", "/v1/commits").events[0]));
    const get = async (path: string) => expectStatus(await server.request("GET", path), 200);
    same("get", "/v1/endpoints/{id}", await get(`/v1/endpoints/${endpoint.id}`));
    same("get", "/v1/endpoints", await get("/v1/endpoints"));
    same("get", "/v1/events/{id}", await get(`/v1/events/${commit.events[0].id}`));
    same("get", "/v1/deliveries/{id}", await get(`/v1/deliveries/${deliveryId}`));
    same("get", "/v1/deliveries", await get("/v1/deliveries"));
    const attempts = await get(`/v1/deliveries/${deliveryId}/attempts`);
    expect(keys(attempts[0])).toEqual(keys(example("get", "/v1/deliveries/{id}/attempts")[0]));
    const stats = await get("/v1/stats");
    same("get", "/v1/stats", stats);
    expect(keys(stats.endpoints[0])).toEqual(keys(example("get", "/v1/stats").endpoints[0]));
    const history = await get("/v1/stats/history");
    same("get", "/v1/stats/history", history);
    expect(keys(history.buckets[0])).toEqual(keys(example("get", "/v1/stats/history").buckets[0]));
    same("get", "/v1/attempts", await get("/v1/attempts"));
    same("get", "/v1/records/{collection}/{id}", await get("/v1/records/returns/r-1"));
    same("get", "/v1/endpoints/{id}/secret", await get(`/v1/endpoints/${endpoint.id}/secret`));
    same("get", "/healthz", (await fetch(`${server.url}/healthz`).then((r) => r.json())) as Doc);
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
    for (const [method, path] of [...CONTRACT, ...EXTENSIONS]) {
      expect(page).toContain(`${method.toUpperCase()}</code> ${path}</a>`);
    }
    for (const name of Object.keys(doc.components.schemas)) expect(page).toContain(`id="schema-${name}"`);
    expect(page).toContain("outboxd extension");
  });

  test("the document is the one built in process, and /openapi.json needs no token either", async () => {
    const response = await fetch(`${server.url}/openapi.json`, { headers: { authorization: "Bearer nope" } });
    expect(response.status).toBe(200);
    // Plus the webhooks map of the registered event types (none here; test/http/event-types.test.ts).
    expect(await response.json()).toEqual({ ...JSON.parse(JSON.stringify(buildOpenApi())), webhooks: {} });
  });
});
