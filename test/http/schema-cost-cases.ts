// The costliest schemas the registration limit accepts (src/event-types/schema-cost.ts), one per
// way of spending the budget, each with hostile payloads of at most 64 KiB that make every
// check run: a valid one and an invalid one. Shared by test/http/schema-cost.test.ts and
// bench/schema-cost.ts.
import { schemaCost } from "../../src/event-types/schema-cost.ts";

const LIMIT = 64 * 1024;

/** As many copies of `item` as fit in a 64 KiB array. */
function fill(item: unknown): unknown[] {
  const each = Buffer.byteLength(JSON.stringify(item)) + 1;
  return Array.from({ length: Math.floor((LIMIT - 2) / each) }, () => structuredClone(item));
}

/** As many copies of `good` as fit, the last one replaced by `bad`: every item is checked. */
function failLast(good: unknown, bad: unknown): unknown[] {
  const items = fill(good);
  items[items.length - 1] = bad;
  return items;
}

/** The largest `k` for which the schema `make(k)` is accepted. */
function largest(make: (k: number) => unknown): number {
  let k = 1;
  for (;;) {
    try {
      schemaCost(make(k + 1));
    } catch {
      return k;
    }
    k++;
  }
}

export interface CostCase {
  name: string;
  schema: Record<string, unknown>;
  payloads: { valid: unknown; invalid: unknown };
}

/** Each family's largest accepted member, with a valid and an invalid hostile payload. */
export function worstAccepted(): CostCase[] {
  const names = (k: number) => Array.from({ length: k }, (_, i) => `p${i}`);
  const object = (k: number, last = 0) =>
    Object.fromEntries(names(k).map((n, i) => [n, i === k - 1 ? last : 0]));
  const anyOfConst = (k: number) => ({
    type: "array",
    items: { anyOf: Array.from({ length: k }, (_, i) => ({ const: i + 1 })) },
  });
  const oneOfObjects = (k: number) => ({
    type: "array",
    items: { oneOf: Array.from({ length: k }, (_, i) => ({ type: "object", required: [`k${i}`] })) },
  });
  const required = (k: number) => ({ type: "array", items: { required: names(k) } });
  const constObject = (k: number) => ({ type: "array", items: { const: object(k) } });
  // d1 → d0 along both branches of an anyOf, d2 → d1 the same…: 2^k paths to d0.
  const paths = (k: number) => {
    const defs: Record<string, unknown> = { d0: { minimum: 0 } };
    for (let i = 1; i <= k; i++) {
      defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
    }
    return { type: "array", $defs: defs, items: { $ref: `#/$defs/d${k}` } };
  };
  const nested = (k: number) => {
    let schema: Record<string, unknown> = { type: "integer", minimum: 0 };
    for (let i = 0; i < k; i++) schema = { allOf: [schema] };
    return { type: "array", items: schema };
  };
  const tree = (k: number) => ({
    $defs: {
      tree: {
        anyOf: [
          ...Array.from({ length: k }, (_, i) => ({ const: `leaf${i}` })),
          { type: "array", items: { $ref: "#/$defs/tree" }, maxItems: 4 },
        ],
      },
    },
    $ref: "#/$defs/tree",
  });
  const patterns = (k: number) => ({
    type: "object",
    properties: { s: { allOf: Array.from({ length: k }, () => ({ pattern: "^(a|a)+$" })) } },
  });
  const c = {
    anyOfConst: largest(anyOfConst),
    oneOfObjects: largest(oneOfObjects),
    required: largest(required),
    constObject: largest(constObject),
    paths: largest(paths),
    nested: largest(nested),
    tree: largest(tree),
    patterns: largest(patterns),
  };
  return [
    {
      name: `items: anyOf of ${c.anyOfConst} const`,
      schema: anyOfConst(c.anyOfConst),
      payloads: { valid: fill(c.anyOfConst), invalid: failLast(c.anyOfConst, 0) },
    },
    {
      name: `items: oneOf of ${c.oneOfObjects} objects`,
      schema: oneOfObjects(c.oneOfObjects),
      payloads: {
        valid: fill({ [`k${c.oneOfObjects - 1}`]: 0 }),
        invalid: failLast({ [`k${c.oneOfObjects - 1}`]: 0 }, {}),
      },
    },
    {
      name: `items: required of ${c.required} names`,
      schema: required(c.required),
      payloads: { valid: fill(object(c.required)), invalid: failLast(object(c.required), {}) },
    },
    {
      name: `items: const object of ${c.constObject} members`,
      schema: constObject(c.constObject),
      payloads: {
        valid: fill(object(c.constObject)),
        invalid: failLast(object(c.constObject), object(c.constObject, 1)),
      },
    },
    {
      name: `items: $ref reached along ${2 ** c.paths} paths`,
      schema: paths(c.paths),
      payloads: { valid: fill(0), invalid: failLast(0, -1) },
    },
    {
      name: `items: allOf nested ${c.nested} deep`,
      schema: nested(c.nested),
      payloads: { valid: fill(0), invalid: failLast(0, -1) },
    },
    {
      name: `recursion: an anyOf of ${c.tree} const or an array of itself`,
      schema: tree(c.tree),
      payloads: { valid: recursive(`leaf${c.tree - 1}`), invalid: recursive("x") },
    },
    {
      name: "items: enum of 5,000 strings",
      schema: { type: "array", items: { enum: Array.from({ length: 5000 }, (_, i) => `v${i}`) } },
      payloads: { valid: fill("v4999"), invalid: failLast("v4999", "x") },
    },
    {
      name: `one string: ${c.patterns} patterns`,
      schema: patterns(c.patterns),
      payloads: { valid: { s: "a".repeat(LIMIT - 16) }, invalid: { s: `${"a".repeat(LIMIT - 17)}!` } },
    },
  ];
}

/** Nested arrays of `leaf` as deep and wide as 64 KiB allows (`[[[0,0],[0,0]],…]`). */
function recursive(leaf: unknown): unknown {
  let value: unknown = leaf;
  while (Buffer.byteLength(JSON.stringify([value, value, value, value])) <= LIMIT)
    value = [value, value, value, value];
  return value;
}
