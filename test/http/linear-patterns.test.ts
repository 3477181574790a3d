// Linear-time patterns (DESIGN §9): JSON Schema `pattern` and `patternProperties` run on an RE2
// engine, so a hostile pattern and payload cannot stall the process (JavaScript's backtracking
// RegExp takes time doubling per character on `^(a|a)+$`); patterns it cannot run are refused at
// registration with their pointer, and a stored schema with one is kept, named in a `warn` line
// at start, its events 422 `schema-unsupported` until replaced. `uniqueItems` needs scalar items.
// bench/patterns.ts prints the validation time of the hostile case.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fullFormats } from "ajv-formats/dist/formats.js";
import fc from "fast-check";
import { compilePayloadSchema } from "../../src/event-types/payload-schema.ts";
import { createLogger } from "../../src/ops/log.ts";
import { exec } from "../dispatch/harness.ts";
import { apiClient } from "../helpers/api.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const HOSTILE = "^(a|a)+$";
/** A string the hostile pattern does not match, of `n` characters: backtracking tries 2^n ways. */
const hostileText = (n: number) => `${"a".repeat(n - 1)}!`;

/** How long `f` takes (ms). */
function timed(f: () => void): number {
  const start = performance.now();
  f();
  return performance.now() - start;
}

describe("validation time does not depend on the pattern's backtracking", () => {
  const validate = compilePayloadSchema({
    type: "object",
    properties: { s: { type: "string", pattern: HOSTILE } },
    patternProperties: { [HOSTILE]: { type: "integer" } },
  });

  test("`^(a|a)+$` against 32 characters (2^32 ways for a backtracking engine) is refused at once", () => {
    const errors: unknown[] = [];
    const ms = timed(() => errors.push(...validate({ s: hostileText(32) }, "")));
    expect(errors).toEqual([expect.objectContaining({ pointer: "/s" })]);
    expect(ms).toBeLessThan(250);
  });

  test("and against a 64 KiB value and a 64 KiB property name, well within the deadline", () => {
    const text = hostileText(64 * 1024);
    expect(validate({ s: "aaaa" }, "")).toEqual([]);
    let errors: unknown[] = [];
    // Linear: generous for a loaded 2-core machine; a backtracking engine would never finish.
    const ms = timed(() => {
      errors = validate({ s: text, [text.slice(0, -1)]: "not an integer" }, "");
    });
    expect(errors).toHaveLength(2);
    expect(ms).toBeLessThan(1000);
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

  test("a hostile pattern and a 64 KiB payload: the commit is answered 422 at once", async () => {
    expectStatus(
      await server.request("PUT", "/v1/event-types/hostile.x", {
        schema: { type: "object", properties: { s: { type: "string", pattern: HOSTILE } } },
      }),
      201,
    );
    const start = performance.now();
    const answer = await server.request("POST", "/v1/commits", {
      events: [{ type: "hostile.x", aggregate: "h/1", payload: { s: hostileText(60_000) } }],
    });
    expectProblem(answer, 422, "/events/0/payload/s");
    expect(performance.now() - start).toBeLessThan(2000);
  });

  test("patterns RE2 cannot run are 422 at registration with the pattern's pointer", async () => {
    const cases: [unknown, string][] = [
      [{ properties: { s: { pattern: "^(?=a)a$" } } }, "/schema/properties/s/pattern"],
      [{ items: { pattern: "(a)\\1" } }, "/schema/items/pattern"],
      [{ patternProperties: { "^(?!x)": {} } }, "/schema/patternProperties/^(?!x)"],
      [
        { $defs: { d: { patternProperties: { "a/(?<=b)": true } } } },
        "/schema/$defs/d/patternProperties/a~1(?<=b)",
      ],
    ];
    for (const [schema, pointer] of cases) {
      const problem = expectProblem(
        await server.request("PUT", "/v1/event-types/patterns.bad", { schema }),
        422,
        pointer,
      );
      expect(problem.detail).toContain("linear-time engine");
    }
    expectProblem(await server.request("GET", "/v1/event-types/patterns.bad"), 404);
    // What RE2 runs is accepted: classes, \d, \u escapes, named groups, `/`, a "pattern" key that
    // is a property name or data.
    expectStatus(
      await server.request("PUT", "/v1/event-types/patterns.good", {
        schema: {
          properties: {
            pattern: { type: "string", pattern: "^[a-z]+/\\d{3}\\u00e9(?<tail>x)?$" },
            fixed: { const: { pattern: "(?=x)" } },
          },
          patternProperties: { "^x-": { type: "string" } },
        },
      }),
      201,
    );
    expectStatus(
      await server.request("POST", "/v1/commits", {
        events: [
          { type: "patterns.good", aggregate: "p/1", payload: { pattern: "ab/123\u00e9", "x-a": "y" } },
        ],
      }),
      201,
    );
    expectProblem(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "patterns.good", aggregate: "p/1", payload: { pattern: "ab/12" } }],
      }),
      422,
      "/events/0/payload/pattern",
    );
  });

  test("uniqueItems without a scalar item type is 422 at registration; with one it is fine", async () => {
    const refused: [unknown, string][] = [
      [{ type: "array", uniqueItems: true }, "/schema/uniqueItems"],
      [{ type: "array", uniqueItems: true, items: { type: "object" } }, "/schema/uniqueItems"],
      [
        { properties: { a: { uniqueItems: true, items: { type: ["string", "array"] } } } },
        "/schema/properties/a/uniqueItems",
      ],
    ];
    for (const [schema, pointer] of refused) {
      expectProblem(await server.request("PUT", "/v1/event-types/unique.bad", { schema }), 422, pointer);
    }
    for (const [i, items] of [{ type: "string" }, { type: ["integer", "null"] }].entries()) {
      expectStatus(
        await server.request("PUT", `/v1/event-types/unique.good${i}`, {
          schema: { type: "array", uniqueItems: true, items },
        }),
        201,
      );
    }
    expectStatus(
      await server.request("PUT", "/v1/event-types/unique.off", { schema: { uniqueItems: false } }),
      201,
    );
  });
});

test("a stored schema with a pattern RE2 cannot run: kept, a warn line at start, its events 422 schema-unsupported until replaced", async () => {
  const first = await startServer({}, { dispatch: false });
  try {
    // As a schema accepted before this rule: written to the database as stored.
    const schema = JSON.stringify({ properties: { s: { type: "string", pattern: "^(?=a)" } } });
    await exec(
      first,
      `INSERT INTO event_types (type, description, schema, deprecated_at, created_at, updated_at)
       VALUES ('legacy.x', NULL, :schema, NULL, 0, 0)`,
      { schema },
    );
    const lines: string[] = [];
    const second = await startServer(
      { OUTBOXD_DATABASE_URL: first.databaseUrl, OUTBOXD_ADMIN_TOKEN: first.token },
      { dispatch: false, logger: createLogger("warn", (line) => lines.push(line)) },
    );
    try {
      const warn = lines.map((l) => JSON.parse(l)).find((l) => l.level === "warn" && Array.isArray(l.types));
      expect(warn?.types).toEqual(["legacy.x"]);
      expect(warn?.msg).toContain("schema-unsupported");
      const request = apiClient(second.url, first.token);
      // Kept and listed as stored.
      expect(expectStatus(await request("GET", "/v1/event-types/legacy.x"), 200).schema).toEqual(
        JSON.parse(schema),
      );
      const refused = expectProblem(
        await request("POST", "/v1/commits", {
          events: [{ type: "legacy.x", aggregate: "l/1", payload: { s: "a" } }],
        }),
        422,
        "/events/0/type",
      );
      expect(refused.type).toEndWith("/schema-unsupported");
      // Replacing it with one RE2 runs: accepted again.
      expectStatus(
        await request("PUT", "/v1/event-types/legacy.x", {
          schema: { properties: { s: { pattern: "^a" } } },
        }),
        200,
      );
      expectStatus(
        await request("POST", "/v1/commits", {
          events: [{ type: "legacy.x", aggregate: "l/1", payload: { s: "a" } }],
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

/** What ajv-formats' own definition says of a string; null when it does not apply to strings. */
function referenceAccepts(reference: unknown, text: string): boolean | null {
  if (reference instanceof RegExp) {
    reference.lastIndex = 0;
    return reference.test(text);
  }
  if (typeof reference === "function") return (reference as (s: string) => boolean)(text);
  if (typeof reference !== "object" || reference === null) return null;
  const { type, validate } = reference as { type?: string; validate?: unknown };
  if (type !== undefined && type !== "string") return null;
  if (validate instanceof RegExp) return validate.test(text);
  return typeof validate === "function" ? (validate as (s: string) => boolean)(text) : null;
}

describe("formats (ajv-formats) stay fast too", () => {
  const N = 64 * 1024 - 32;
  const fill = (prefix: string, unit: string, suffix: string) =>
    prefix + unit.repeat(Math.floor((N - prefix.length - suffix.length) / unit.length)) + suffix;
  const HOSTILE_TEXTS = [
    fill("", "a", "!"),
    fill("", "1", "x"),
    fill("a@", "a.", "!"),
    fill("http://", "a", "\u0000"),
    fill("http://", ":", " "),
    fill("http://", "a:", "@ "),
    fill("/", "~", ""),
    fill("", "(", "a"),
    fill("P", "1Y", "x"),
    fill("", "a-", "-"),
    fill("", "1:", ""),
    fill("", "AAAA", "="),
    fill("http://a.com/", "%aa", "\u0000"),
    fill("", "::", "x"),
  ];

  test.each(Object.keys(fullFormats))(
    "%s refuses hostile 64 KiB strings well within the deadline",
    (format) => {
      const validate = compilePayloadSchema({ properties: { s: { type: "string", format } } });
      for (const text of HOSTILE_TEXTS) {
        // Generous for a loaded machine: `url` took 10 s on one of these before.
        expect({ format, ms: timed(() => validate({ s: text }, "")) < 1000 }).toEqual({ format, ms: true });
      }
    },
  );

  test("the formats on the linear-time engine accept exactly what ajv-formats' own expressions accept", () => {
    const validators = Object.fromEntries(
      Object.keys(fullFormats).map((f) => [
        f,
        compilePayloadSchema({ properties: { s: { type: "string", format: f } } }),
      ]),
    );
    const alphabet = fc.constantFrom(..."aZ09:/.-_~%@?#[]!$&'()*+,;= \n{}\"\\é".split(""));
    const samples = fc.oneof(
      fc.string({ unit: alphabet, maxLength: 40 }),
      fc.constantFrom(
        "https://example.com/a?b=c#d",
        "mailto:a@b.c",
        "urn:isbn:0451450523",
        "//host/path",
        "/relative/path?x",
        "http://[::1]:80/",
        "QUJD",
        "QUI=",
        "x\nQUJD",
        "{+path}/x{?q,r}",
        "user@example.com",
      ),
    );
    fc.assert(
      fc.property(samples, (text) => {
        for (const [format, reference] of Object.entries(fullFormats)) {
          if (format === "url") continue;
          const expected = referenceAccepts(reference, text);
          if (expected === null) continue;
          const got =
            (validators[format] as (p: unknown, at: string) => unknown[])({ s: text }, "").length === 0;
          if (got !== expected) throw new Error(`${format} disagrees on ${JSON.stringify(text)}: ${got}`);
        }
      }),
      { numRuns: 2000, seed: 36 },
    );
  });

  test("a url is at most 2048 characters", () => {
    const validate = compilePayloadSchema({ properties: { s: { type: "string", format: "url" } } });
    expect(validate({ s: `https://example.com/${"a".repeat(2000)}` }, "")).toEqual([]);
    expect(validate({ s: `https://example.com/${"a".repeat(2100)}` }, "")).toHaveLength(1);
  });
});
