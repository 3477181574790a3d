// The event-type catalog (DESIGN §9): registration and its refusals, payload validation at
// commit with pointers into the request, strict mode, the Deprecation header, the cache kept in
// step with changes (in this process and in another one on the same database).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventTypeCatalog } from "../../src/event-types/catalog.ts";
import { apiClient } from "../helpers/api.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const REFUND_SCHEMA = {
  type: "object",
  properties: {
    returnId: { type: "string" },
    amount: { type: "integer", minimum: 0 },
    currency: { enum: ["EUR", "USD"] },
    lines: { type: "array", items: { $ref: "#/$defs/line" } },
  },
  required: ["returnId", "amount"],
  additionalProperties: false,
  $defs: { line: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } },
};

let server: TestServer;

beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
});
afterAll(async () => {
  await server.stop();
});

function commitEvent(type: string, payload: unknown, id = crypto.randomUUID()) {
  return server.request("POST", "/v1/commits", {
    records: [{ collection: "returns", id, data: { status: "refunded" } }],
    events: [{ type, payload }],
  });
}

describe("registration", () => {
  test("PUT creates (201), replaces the whole entry (200), GET and the list show it, DELETE removes it", async () => {
    const created = expectStatus(
      await server.request("PUT", "/v1/event-types/catalog.one", {
        description: "first",
        schema: { type: "object" },
        deprecated: true,
      }),
      201,
    );
    expect(created).toMatchObject({
      type: "catalog.one",
      description: "first",
      schema: { type: "object" },
      deprecated: true,
    });
    expect(Object.keys(created)).toEqual(
      expect.arrayContaining(["type", "description", "schema", "deprecated", "createdAt", "updatedAt"]),
    );
    // Omitted fields reset.
    const replaced = expectStatus(await server.request("PUT", "/v1/event-types/catalog.one", {}), 200);
    expect(replaced).toMatchObject({
      type: "catalog.one",
      description: null,
      schema: null,
      deprecated: false,
    });
    expect(replaced.createdAt).toBe(created.createdAt);
    expect(expectStatus(await server.request("GET", "/v1/event-types/catalog.one"), 200)).toEqual(replaced);
    const listed = expectStatus(await server.request("GET", "/v1/event-types?limit=500"), 200);
    expect(listed.data.map((t: { type: string }) => t.type)).toContain("catalog.one");
    expect(listed.next).toBeNull();
    expect((await server.request("DELETE", "/v1/event-types/catalog.one")).status).toBe(204);
    expectProblem(await server.request("GET", "/v1/event-types/catalog.one"), 404);
    expectProblem(await server.request("DELETE", "/v1/event-types/catalog.one"), 404);
  });

  test("a schema that does not compile, a remote $ref, another dialect or one over 64 KiB is 422, nothing stored", async () => {
    const cases: [unknown, string][] = [
      [{ type: "nope" }, "/schema"],
      [{ properties: { a: { $ref: "https://example.com/a.json" } } }, "/schema/properties/a/$ref"],
      [{ items: [{ $dynamicRef: "other.json#x" }] }, "/schema/items/0/$dynamicRef"],
      [{ $schema: "http://json-schema.org/draft-07/schema#" }, "/schema/$schema"],
      [{ description: "x".repeat(65 * 1024) }, "/schema"],
      [[1, 2], "/schema"],
    ];
    for (const [schema, pointer] of cases) {
      expectProblem(await server.request("PUT", "/v1/event-types/catalog.bad", { schema }), 422, pointer);
    }
    expectProblem(await server.request("GET", "/v1/event-types/catalog.bad"), 404);
    // A "$ref" that is data (inside const) is not a reference.
    expectStatus(
      await server.request("PUT", "/v1/event-types/catalog.data-ref", {
        schema: { properties: { link: { const: { $ref: "https://example.com" } } } },
      }),
      201,
    );
  });

  test("bad type names and unknown fields are 422 naming them", async () => {
    expectProblem(await server.request("PUT", "/v1/event-types/bad%20type", {}), 422, "path:type");
    expectProblem(
      await server.request("PUT", "/v1/event-types/catalog.x", { colour: "red" }),
      422,
      "/colour",
    );
  });
});

describe("validation at commit", () => {
  beforeAll(async () => {
    expectStatus(
      await server.request("PUT", "/v1/event-types/refund.issued", { schema: REFUND_SCHEMA }),
      201,
    );
  });

  test("a valid payload commits", async () => {
    expectStatus(
      await commitEvent("refund.issued", { returnId: "r-1", amount: 5, lines: [{ sku: "a" }] }),
      201,
    );
  });

  test("violations are 422 with pointers into the request, and nothing is written", async () => {
    const id = crypto.randomUUID();
    const problem = expectProblem(
      await commitEvent("refund.issued", { amount: -1, currency: "GBP", extra: 1, lines: [{}] }, id),
      422,
    );
    const pointers = problem.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual([
      "/events/0/payload/amount",
      "/events/0/payload/currency",
      "/events/0/payload/extra",
      "/events/0/payload/lines/0/sku",
      "/events/0/payload/returnId",
    ]);
    expectProblem(await server.request("GET", `/v1/records/returns/${id}`), 404);
  });

  test("the index of the offending event is in the pointer; other types are not checked", async () => {
    const problem = expectProblem(
      await server.request("POST", "/v1/commits", {
        events: [
          { type: "anything.else", aggregate: "a/1", payload: { whatever: true } },
          { type: "refund.issued", aggregate: "a/1", payload: { returnId: "r", amount: "5" } },
        ],
      }),
      422,
    );
    expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/events/1/payload/amount"]);
  });

  test("PUT /v1/records validates its events too", async () => {
    expectProblem(
      await server.request("PUT", "/v1/records/returns/put-checked", {
        data: {},
        events: [{ type: "refund.issued", payload: { returnId: "r" } }],
      }),
      422,
      "/events/0/payload/amount",
    );
  });

  test("a replaced schema applies to the next commit (the compiled one is not kept)", async () => {
    expectStatus(
      await server.request("PUT", "/v1/event-types/catalog.changing", {
        schema: { type: "object", required: ["a"] },
      }),
      201,
    );
    expectProblem(await commitEvent("catalog.changing", { b: 1 }), 422, "/events/0/payload/a");
    expectStatus(
      await server.request("PUT", "/v1/event-types/catalog.changing", {
        schema: { type: "object", required: ["b"] },
      }),
      200,
    );
    expectStatus(await commitEvent("catalog.changing", { b: 1 }), 201);
    expect((await server.request("DELETE", "/v1/event-types/catalog.changing")).status).toBe(204);
    expectStatus(await commitEvent("catalog.changing", {}), 201);
  });

  test("an event of a deprecated type is accepted with Deprecation: @<unix seconds> (RFC 9745)", async () => {
    const type = expectStatus(
      await server.request("PUT", "/v1/event-types/catalog.old", { deprecated: true }),
      201,
    );
    const response = await commitEvent("catalog.old", {});
    expectStatus(response, 201);
    expect(response.headers.get("deprecation")).toBe(`@${Math.floor(Date.parse(type.deprecatedAt) / 1000)}`);
    expect((await commitEvent("catalog.current", {})).headers.get("deprecation")).toBeNull();
  });
});

describe("OUTBOXD_EVENT_TYPES=strict", () => {
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startServer({ OUTBOXD_EVENT_TYPES: "strict" }, { dispatch: false });
  });
  afterAll(async () => {
    await strict.stop();
  });

  test("refuses unregistered types (422 at /events/i/type), accepts registered ones", async () => {
    const refused = expectProblem(
      await strict.request("POST", "/v1/commits", {
        events: [
          { type: "strict.known", aggregate: "s/1" },
          { type: "strict.unknown", aggregate: "s/1" },
        ],
      }),
      422,
    );
    expect(refused.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
      "/events/0/type",
      "/events/1/type",
    ]);
    expectStatus(await strict.request("PUT", "/v1/event-types/strict.unknown", {}), 201);
    expectStatus(
      await strict.request("POST", "/v1/commits", { events: [{ type: "strict.unknown", aggregate: "s/1" }] }),
      201,
    );
  });

  test("the built-in outboxd.* types are registered ones", async () => {
    const catalog = new EventTypeCatalog({ db: strict.outboxd.db, clock: Date.now, mode: "strict" });
    await catalog.load();
    for (const type of ["outboxd.ping", "outboxd.endpoint.disabled", "outboxd.endpoint.enabled"]) {
      expect(catalog.check([{ type }], "/events")).toBeNull();
    }
    expect(() => catalog.check([{ type: "outboxd.other" }], "/events")).toThrow(
      "not a registered event type",
    );
  });
});

describe("reserved names (DESIGN §9)", () => {
  const BUILTIN = ["outboxd.endpoint.disabled", "outboxd.endpoint.enabled", "outboxd.ping"];

  test("outboxd.* types and outboxd/ aggregates are 422 in commits, PUT records and proposals", async () => {
    const cases: [unknown, string][] = [
      [{ events: [{ type: "outboxd.ping", aggregate: "a/1" }] }, "/events/0/type"],
      [{ events: [{ type: "outboxd.endpoint.disabled", aggregate: "a/1" }] }, "/events/0/type"],
      [{ events: [{ type: "ok.type", aggregate: "outboxd/endpoints/ep_1" }] }, "/events/0/aggregate"],
      // A record's default aggregate counts too.
      [
        {
          records: [{ collection: "outboxd", id: "x", expectedVersion: 0, data: {} }],
          events: [{ type: "ok.type" }],
        },
        "/events/0/aggregate",
      ],
    ];
    for (const [body, pointer] of cases) {
      const problem = expectProblem(await server.request("POST", "/v1/commits", body), 422);
      expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer]);
      const proposed = expectProblem(
        await server.request("POST", "/v1/proposals", { commit: body, summary: "reserved" }),
        422,
      );
      expect(proposed.errors.map((e: { pointer: string }) => e.pointer)).toEqual([`/commit${pointer}`]);
    }
    const put = expectProblem(
      await server.request("PUT", "/v1/records/outboxd/x", { data: {}, events: [{ type: "ok.type" }] }),
      422,
    );
    expect(put.errors[0].pointer).toBe("/events/0/aggregate");
  });

  test("PUT and DELETE of an outboxd.* type are 409 reserved-type, registered or not", async () => {
    for (const type of [...BUILTIN, "outboxd.mine"]) {
      const put = expectProblem(await server.request("PUT", `/v1/event-types/${type}`, {}), 409);
      expect(put.type).toEndWith("/reserved-type");
      const del = expectProblem(await server.request("DELETE", `/v1/event-types/${type}`), 409);
      expect(del.type).toEndWith("/reserved-type");
    }
  });

  test("the built-in types are listed and read with their schemas, and are in the OpenAPI webhooks", async () => {
    expectStatus(await server.request("PUT", "/v1/event-types/aaa.first", {}), 201);
    expectStatus(await server.request("PUT", "/v1/event-types/zzz.last", {}), 201);
    try {
      const all = expectStatus(await server.request("GET", "/v1/event-types?limit=500"), 200);
      const types = all.data.map((t: { type: string }) => t.type);
      expect(types).toEqual([...types].sort());
      expect(types).toEqual(expect.arrayContaining([...BUILTIN, "aaa.first", "zzz.last"]));
      // Paged one at a time, every type comes once, in order.
      const paged: string[] = [];
      let after: string | null = null;
      do {
        const query: string = after === null ? "" : `&after=${encodeURIComponent(after)}`;
        const answer = expectStatus(await server.request("GET", `/v1/event-types?limit=1${query}`), 200);
        paged.push(...answer.data.map((t: { type: string }) => t.type));
        after = answer.next;
      } while (after !== null);
      expect(paged).toEqual(types);
      for (const type of BUILTIN) {
        const entry = expectStatus(await server.request("GET", `/v1/event-types/${type}`), 200);
        expect(entry.type).toBe(type);
        expect(entry.schema.type).toBe("object");
      }
      const disabled = expectStatus(
        await server.request("GET", "/v1/event-types/outboxd.endpoint.disabled"),
        200,
      );
      expect(disabled.schema.required).toEqual([
        "endpointId",
        "description",
        "reason",
        "failingSince",
        "lastError",
      ]);
      const doc = await (await fetch(`${server.url}/openapi.json`)).json();
      for (const type of BUILTIN) {
        expect(
          doc.webhooks[type].post.requestBody.content["application/json"].schema.properties.type,
        ).toEqual({
          const: type,
        });
      }
    } finally {
      await server.request("DELETE", "/v1/event-types/aaa.first");
      await server.request("DELETE", "/v1/event-types/zzz.last");
    }
  });
});

test("another process on the same database sees a registration within its refresh interval", async () => {
  const other = await startServer(
    { OUTBOXD_DATABASE_URL: server.databaseUrl, OUTBOXD_ADMIN_TOKEN: server.token },
    { dispatch: false },
  );
  // The other process is configured with this server's admin token, not its harness's own.
  const request = apiClient(other.url, server.token);
  try {
    expectStatus(
      await request("POST", "/v1/commits", { events: [{ type: "shared.x", aggregate: "x/1" }] }),
      201,
    );
    expectStatus(
      await server.request("PUT", "/v1/event-types/shared.x", {
        schema: { type: "object", required: ["n"] },
      }),
      201,
    );
    await waitFor("the other process to refuse a payload without n", async () => {
      const response = await request("POST", "/v1/commits", {
        events: [{ type: "shared.x", aggregate: "x/1" }],
      });
      return response.status === 422 && response.body.errors[0].pointer === "/events/0/payload/n";
    });
  } finally {
    await other.stop();
  }
});

describe("/openapi.json webhooks and /docs", () => {
  test("every registered type is under webhooks with the §4 body and data = its schema", async () => {
    expectStatus(
      await server.request("PUT", "/v1/event-types/docs.refund", {
        description: "A refund was issued.",
        schema: REFUND_SCHEMA,
        deprecated: true,
      }),
      201,
    );
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const op = doc.webhooks["docs.refund"].post;
    expect(op.summary).toBe("A refund was issued.");
    expect(op.deprecated).toBe(true);
    const body = op.requestBody.content["application/json"].schema;
    expect(body.required).toEqual([
      "id",
      "type",
      "timestamp",
      "aggregate",
      "sequence",
      "previousSequence",
      "data",
    ]);
    expect(body.properties.type).toEqual({ const: "docs.refund" });
    // Its own resource, so that #/$defs/line resolves inside it, not in the OpenAPI document.
    expect(body.properties.data).toEqual({ $id: "urn:outboxd:event-type:docs.refund", ...REFUND_SCHEMA });
    const page = await (await fetch(`${server.url}/docs`)).text();
    expect(page).toContain('id="webhook-docs.refund"');
    expect(page).toContain("A refund was issued.");
    expect((await server.request("DELETE", "/v1/event-types/docs.refund")).status).toBe(204);
    const after = await (await fetch(`${server.url}/openapi.json`)).json();
    expect(after.webhooks["docs.refund"]).toBeUndefined();
  });
});
