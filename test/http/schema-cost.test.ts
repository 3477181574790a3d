// Bounded validation cost (DESIGN §17: a payload of ≤ 64 KiB validates in < 50 ms whatever the
// schema and payload). A new schema whose worst-case checks per payload value are over the limit
// is refused at registration with the pointer of the keyword to change
// (src/event-types/schema-cost.ts); a stored one is kept, named in a `warn` line at start, its
// events 422 `schema-unsupported`; the schemas the limit accepts validate hostile 64 KiB payloads
// quickly (here under a deadline generous for a busy machine; bench/schema-cost.ts prints the
// times against 50 ms).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { compilePayloadSchema } from "../../src/event-types/payload-schema.ts";
import { MAX_CHECKS_PER_VALUE, schemaCost } from "../../src/event-types/schema-cost.ts";
import { createLogger } from "../../src/ops/log.ts";
import { exec } from "../dispatch/harness.ts";
import { apiClient } from "../helpers/api.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { worstAccepted } from "./schema-cost-cases.ts";

const consts = (n: number) => Array.from({ length: n }, (_, i) => ({ const: `v${i}` }));
/** An `items` that is an anyOf of 1,500 const branches: 20 s on 8,000 items before the limit. */
const WIDE_ANY_OF = { type: "array", items: { anyOf: consts(1500) } };

/** Realistic schemas: each must be accepted. */
const ORDINARY: Record<string, unknown> = {
  order: {
    type: "object",
    required: ["orderId", "customer", "lines", "total"],
    additionalProperties: false,
    properties: {
      orderId: { type: "string", format: "uuid" },
      placedAt: { type: "string", format: "date-time" },
      status: { enum: ["placed", "paid", "shipped", "delivered", "cancelled", "refunded"] },
      customer: {
        type: "object",
        required: ["id", "email"],
        properties: {
          id: { type: "string", pattern: "^cus_[A-Za-z0-9]+$" },
          email: { type: "string", format: "email" },
          name: { type: "string", maxLength: 200 },
          address: { $ref: "#/$defs/address" },
        },
      },
      shipping: { $ref: "#/$defs/address" },
      lines: {
        type: "array",
        minItems: 1,
        maxItems: 500,
        items: {
          type: "object",
          required: ["sku", "quantity", "unitPrice"],
          additionalProperties: false,
          properties: {
            sku: { type: "string", pattern: "^[A-Z0-9-]{3,32}$" },
            quantity: { type: "integer", minimum: 1 },
            unitPrice: { $ref: "#/$defs/money" },
            discount: { oneOf: [{ $ref: "#/$defs/money" }, { type: "number", minimum: 0, maximum: 100 }] },
            tags: { type: "array", items: { type: "string", maxLength: 40 }, uniqueItems: true },
          },
        },
      },
      total: { $ref: "#/$defs/money" },
      payment: {
        anyOf: [
          { type: "object", required: ["card"], properties: { card: { type: "string" } } },
          { type: "object", required: ["iban"], properties: { iban: { type: "string" } } },
          { type: "object", required: ["voucher"], properties: { voucher: { type: "string" } } },
          { type: "null" },
        ],
      },
      metadata: { type: "object", additionalProperties: { type: ["string", "number", "boolean"] } },
    },
    $defs: {
      money: {
        type: "object",
        required: ["amount", "currency"],
        properties: {
          amount: { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,4})?$" },
          currency: { enum: ["EUR", "USD", "GBP", "CHF", "JPY", "SEK", "NOK", "DKK", "PLN", "CZK"] },
        },
      },
      address: {
        type: "object",
        properties: {
          line1: { type: "string" },
          city: { type: "string" },
          country: { enum: Array.from({ length: 250 }, (_, i) => `C${i}`) },
        },
      },
    },
  },
  "array of objects with a oneOf of 10 branches": {
    type: "array",
    items: {
      oneOf: Array.from({ length: 10 }, (_, i) => ({ type: "object", required: [`kind${i}`] })),
    },
  },
  "anyOf of 10 const over items": { type: "array", items: { anyOf: consts(10) } },
  "enum of 800 values over items": {
    type: "array",
    items: { enum: Array.from({ length: 800 }, (_, i) => `value-${i}`) },
  },
  "a tree (recursion through items)": {
    $defs: {
      node: {
        type: "object",
        required: ["name"],
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/node" } },
        },
      },
    },
    $ref: "#/$defs/node",
  },
  "a linked list (recursion through a property)": {
    $defs: { cell: { type: "object", properties: { value: {}, next: { $ref: "#/$defs/cell" } } } },
    $ref: "#/$defs/cell",
  },
  "a 1,500-branch anyOf on the payload itself (one value)": { anyOf: consts(1500) },
  "a map of records": {
    type: "object",
    patternProperties: { "^[a-z]+$": { type: "object", properties: { at: { type: "integer" } } } },
    additionalProperties: false,
  },
};

/** d1 → d0 along both branches of an anyOf, d2 → d1 the same…, the payload itself a dk. */
function rootPaths(k: number): unknown {
  const defs: Record<string, unknown> = { d0: { minimum: 0 } };
  for (let i = 1; i <= k; i++)
    defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
  return { $defs: defs, $ref: `#/$defs/d${k}` };
}

describe("the cost of a schema", () => {
  test("the 1,500-const anyOf over items is over the limit, at its anyOf, with what to do", () => {
    expect(() => schemaCost(WIDE_ANY_OF)).toThrow(/use enum instead of an anyOf or oneOf of const/);
    try {
      schemaCost(WIDE_ANY_OF);
    } catch (error) {
      expect((error as { error: { pointer: string } }).error.pointer).toBe("/schema/items/anyOf");
    }
  });

  test("ordinary schemas are within it", () => {
    for (const [name, schema] of Object.entries(ORDINARY)) {
      const cost = schemaCost(schema);
      expect({ name, within: cost.perValue <= MAX_CHECKS_PER_VALUE }).toEqual({ name, within: true });
      compilePayloadSchema(schema);
    }
  });

  test("an enum costs one check whatever its length; an anyOf of const costs one per branch", () => {
    const enumOf = (n: number) => ({ items: { enum: Array.from({ length: n }, (_, i) => i) } });
    expect(schemaCost(enumOf(5000)).perValue).toBe(schemaCost(enumOf(3)).perValue);
    expect(schemaCost({ items: { anyOf: consts(12) } }).perValue).toBeGreaterThan(
      schemaCost({ items: { anyOf: consts(6) } }).perValue,
    );
  });

  test("the enum keeps JSON equality and ajv's message", () => {
    const validate = compilePayloadSchema({
      properties: { e: { enum: ["a", 1, null, false, { x: [1, { y: 2 }] }, [1, 2]] } },
    });
    for (const e of ["a", 1, 1.0, null, false, { x: [1, { y: 2 }] }, [1, 2]])
      expect(validate({ e }, "")).toEqual([]);
    for (const e of ["b", "1", 0, true, { x: [1, { y: 3 }] }, { x: [1, { y: 2 }], z: 1 }, [2, 1], {}]) {
      expect(validate({ e }, "")).toEqual([
        { pointer: "/e", detail: "must be equal to one of the allowed values (event type schema)" },
      ]);
    }
  });

  test("references: a cycle on the same value, and a definition reached along ever more paths, are refused", () => {
    const refused: [unknown, string, RegExp][] = [
      [
        { $defs: { a: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" },
        "/schema/$defs/a/allOf/0/$ref",
        /loops forever/,
      ],
      [
        { $defs: { a: { $ref: "#/$defs/b" }, b: { not: { $ref: "#/$defs/a" } } }, $ref: "#/$defs/a" },
        "/schema/$defs/b/not/$ref",
        /loops forever/,
      ],
      // Each level of nesting doubles the paths: 2^256 for a 256-deep payload.
      [
        {
          $defs: { t: { items: { $ref: "#/$defs/t" }, contains: { $ref: "#/$defs/t" } } },
          $ref: "#/$defs/t",
        },
        "",
        /per value/,
      ],
      [
        {
          $defs: {
            a: { anyOf: [{ $ref: "#/$defs/b" }, { $ref: "#/$defs/b" }] },
            b: { anyOf: [{ $ref: "#/$defs/c" }, { $ref: "#/$defs/c" }] },
            c: { anyOf: [{ $ref: "#/$defs/d" }, { $ref: "#/$defs/d" }] },
            d: { anyOf: [{ type: "integer" }, { type: "string" }] },
          },
          items: { $ref: "#/$defs/a" },
        },
        "/schema/$defs/c/anyOf/1/$ref",
        /reach each definition along one path/,
      ],
      // The same at the payload itself, 2^24 paths: one value, but over the limit in all.
      [rootPaths(24), "/schema/$defs/d1/anyOf/1/$ref", /one payload cost .* one path/],
    ];
    for (const [schema, pointer, detail] of refused) {
      let error: { pointer: string; detail: string } | undefined;
      try {
        schemaCost(schema);
      } catch (e) {
        error = (e as { error: { pointer: string; detail: string } }).error;
      }
      expect(error?.detail).toMatch(detail);
      if (pointer !== "") expect(error?.pointer).toBe(pointer);
      else expect(error?.pointer).toStartWith("/schema/");
    }
  });

  test("more than four patterns or formats on one value are refused (each scans the whole string)", () => {
    const patterns = (n: number) => ({
      items: { allOf: Array.from({ length: n }, () => ({ pattern: "^a" })) },
    });
    expect(schemaCost(patterns(4)).scans).toBe(4);
    expect(() => schemaCost(patterns(5))).toThrow(/pattern and format checks/);
    expect(() =>
      schemaCost({
        patternProperties: Object.fromEntries(["^a", "^b", "^c", "^d", "^e"].map((p) => [p, {}])),
      }),
    ).toThrow(/pattern and format checks/);
  });
});

describe("the costliest accepted schemas against hostile 64 KiB payloads", () => {
  for (const { name, schema, payloads } of worstAccepted()) {
    test(name, () => {
      expect(schemaCost(schema).perValue).toBeLessThanOrEqual(MAX_CHECKS_PER_VALUE);
      const validate = compilePayloadSchema(schema);
      for (const [kind, payload] of Object.entries(payloads)) {
        expect(Buffer.byteLength(JSON.stringify(payload))).toBeLessThanOrEqual(64 * 1024);
        let errors: unknown[] = [];
        const start = performance.now();
        errors = validate(payload, "");
        // < 50 ms on an idle machine (bench/schema-cost.ts); generous for a busy one.
        expect(performance.now() - start).toBeLessThan(1000);
        expect(errors.length === 0).toBe(kind === "valid");
      }
    });
  }

  test("a small invalid payload still lists every violation; a large one its first", () => {
    const validate = compilePayloadSchema({ type: "array", items: { type: "integer", minimum: 0 } });
    expect(validate([-1, -2, -3], "")).toHaveLength(3);
    expect(validate(Array(30_000).fill(-1), "")).toHaveLength(1);
  });
});

describe("over HTTP", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
  });
  afterAll(async () => {
    await server.stop();
  });

  test("the 1,500-const anyOf is 422 at registration with its pointer; as an enum it is accepted", async () => {
    const problem = expectProblem(
      await server.request("PUT", "/v1/event-types/wide.x", { schema: WIDE_ANY_OF }),
      422,
      "/schema/items/anyOf",
    );
    expect(JSON.stringify(problem)).toContain("use enum instead");
    expectProblem(await server.request("GET", "/v1/event-types/wide.x"), 404);
    expectStatus(
      await server.request("PUT", "/v1/event-types/wide.x", {
        schema: { type: "array", items: { enum: consts(1500).map((c) => c.const) } },
      }),
      201,
    );
    const start = performance.now();
    expectProblem(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "wide.x", aggregate: "w/1", payload: Array(8000).fill("nope") }],
      }),
      422,
      "/events/0/payload/0",
    );
    expect(performance.now() - start).toBeLessThan(2000);
  });

  test("ordinary schemas are registered", async () => {
    for (const [i, schema] of Object.values(ORDINARY).entries()) {
      expectStatus(await server.request("PUT", `/v1/event-types/ordinary.t${i}`, { schema }), 201);
    }
  });
});

test("a stored schema over the limit: kept, a warn line at start, its events 422 schema-unsupported until replaced", async () => {
  const first = await startServer({}, { dispatch: false });
  try {
    // As a schema accepted before the limit: written to the database as stored.
    const schema = JSON.stringify(WIDE_ANY_OF);
    await exec(
      first,
      `INSERT INTO event_types (type, description, schema, deprecated_at, created_at, updated_at)
       VALUES ('legacy.wide', NULL, :schema, NULL, 0, 0)`,
      { schema },
    );
    const lines: string[] = [];
    const second = await startServer(
      { OUTBOXD_DATABASE_URL: first.databaseUrl, OUTBOXD_ADMIN_TOKEN: first.token },
      { dispatch: false, logger: createLogger("warn", (line) => lines.push(line)) },
    );
    try {
      const warn = lines.map((l) => JSON.parse(l)).find((l) => l.level === "warn" && Array.isArray(l.types));
      expect(warn?.types).toEqual(["legacy.wide"]);
      const request = apiClient(second.url, first.token);
      expect(expectStatus(await request("GET", "/v1/event-types/legacy.wide"), 200).schema).toEqual(
        JSON.parse(schema),
      );
      const refused = expectProblem(
        await request("POST", "/v1/commits", {
          events: [{ type: "legacy.wide", aggregate: "l/1", payload: ["v1"] }],
        }),
        422,
        "/events/0/type",
      );
      expect(refused.type).toEndWith("/schema-unsupported");
      expectStatus(
        await request("PUT", "/v1/event-types/legacy.wide", {
          schema: { type: "array", items: { enum: consts(1500).map((c) => c.const) } },
        }),
        200,
      );
      expectStatus(
        await request("POST", "/v1/commits", {
          events: [{ type: "legacy.wide", aggregate: "l/1", payload: ["v1"] }],
        }),
        201,
      );
    } finally {
      await second.stop();
    }
  } finally {
    await first.stop();
  }
});
