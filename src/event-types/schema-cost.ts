// The worst-case work of validating one payload against a JSON Schema, computed from the schema
// alone (DESIGN §17: a payload of ≤ 64 KiB validates in < 50 ms whatever the schema and
// payload). Validation visits each payload value with the subschemas that apply to it: the one
// that reaches it (`items`, `properties/x`, `additionalProperties`…) and everything that applies
// to the same value from there (`anyOf`, `allOf`, `$ref`…). The cost of a value is the number of
// keyword checks those subschemas make (a `required` list counts its names, a `const` its size,
// an `enum` its object and array values: scalars are one hash lookup). A value reached through
// `items`, `additionalProperties`, `patternProperties`… can repeat as often as the payload allows
// (32,768 values fit in 64 KiB); one reached only through `properties/x` and `prefixItems/i`
// occurs once per parent. The estimate is conservative: every subschema that can apply to a
// value is assumed to apply (all branches of an `anyOf` fail but the last, every pattern of
// `patternProperties` matches), and a `$ref` is followed wherever it leads, so a definition
// reached along two paths counts twice. A `$ref` cycle that never descends into the payload
// loops forever and is refused outright.
import type { FieldError } from "../lib/problem.ts";

/** The most values a 64 KiB payload holds (`[0,0,…]`: two bytes each). */
export const MAX_PAYLOAD_VALUES = 32 * 1024;
/** The deepest a payload nests (the request parser's limit). */
const MAX_DEPTH = 256;
/**
 * Keyword checks per payload value allowed for a value that can repeat, and in all: calibrated by
 * bench/schema-cost.ts so that the worst schemas accepted validate a hostile 64 KiB payload in
 * well under 50 ms.
 */
export const MAX_CHECKS_PER_VALUE = 32;
export const MAX_CHECKS = MAX_CHECKS_PER_VALUE * MAX_PAYLOAD_VALUES;
/** Pattern and format checks (each a scan of its string) that can apply to one value. */
export const MAX_SCANS_PER_VALUE = 4;
/** Distinct (subschemas, repeating) states explored before a schema counts as too intricate. */
const MAX_STATES = 20_000;

type Schema = Record<string, unknown> | boolean;

interface Node {
  id: number;
  pointer: string;
  schema: Schema;
  /** Keyword checks this subschema makes on one value, children excluded. */
  weight: number;
  /** Pattern and format scans it makes on one value (patternProperties: on each key). */
  scans: number;
  /** The keyword of `weight` that weighs most, for the refusal's pointer. */
  heaviest: string;
  /** Subschemas applied to the same value, each with the pointer of the keyword applying it. */
  same: { node: Node | string; via: string }[];
}

const SAME_ARRAYS = ["allOf", "anyOf", "oneOf"];
const SAME_SCHEMAS = ["not", "if", "then", "else"];
const SCANNING = new Set(["pattern", "format"]);
/** Keywords that check nothing on the value itself. */
const FREE = new Set([
  "$schema",
  "$id",
  "$anchor",
  "$dynamicAnchor",
  "$comment",
  "$defs",
  "definitions",
  "$vocabulary",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentMediaType",
  "contentEncoding",
  "contentSchema",
  ...SAME_ARRAYS,
  ...SAME_SCHEMAS,
  "$ref",
  "$dynamicRef",
  "dependentSchemas",
  "items",
  "prefixItems",
  "additionalItems",
  "contains",
  "properties",
  "patternProperties",
  "additionalProperties",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
]);

const isSchema = (v: unknown): v is Schema =>
  typeof v === "boolean" || (typeof v === "object" && v !== null && !Array.isArray(v));
const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const escapeToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");

/** The number of JSON values in `value` (deep equality walks them all). */
function size(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + size(v), 1);
  if (isMap(value)) return Object.values(value).reduce((n: number, v) => n + size(v), 1);
  return 1;
}

/** Why a schema would make validation unbounded, as the field error of the keyword to change. */
export class SchemaTooCostly extends Error {
  constructor(readonly error: FieldError) {
    super(`${error.pointer}: ${error.detail}`);
  }
}

/** The subschemas of a schema document, with their references resolved. */
class Graph {
  readonly nodes: Node[] = [];
  readonly #byPointer = new Map<string, Node>();
  readonly #anchors = new Map<string, Node>();

  constructor(
    root: Schema,
    readonly at: string,
  ) {
    this.#add(root, at, at);
    for (const node of this.nodes) {
      node.same = node.same.map((edge) =>
        typeof edge.node === "string" ? { node: this.#resolve(edge.node, edge.via), via: edge.via } : edge,
      );
    }
  }

  #add(schema: Schema, pointer: string, resource: string): Node {
    const node: Node = {
      id: this.nodes.length,
      pointer,
      schema,
      weight: 0,
      scans: 0,
      heaviest: pointer,
      same: [],
    };
    this.nodes.push(node);
    this.#byPointer.set(pointer, node);
    if (typeof schema === "boolean") return node;
    const base = typeof schema.$id === "string" && pointer !== this.at ? pointer : resource;
    if (base !== resource || pointer === this.at) this.#byPointer.set(`${base}#`, node);
    for (const key of ["$anchor", "$dynamicAnchor"]) {
      const name = schema[key];
      if (typeof name === "string" && !this.#anchors.has(name)) this.#anchors.set(name, node);
    }
    let heaviest = 0;
    const weigh = (key: string, w: number) => {
      node.weight += w;
      if (w > heaviest) {
        heaviest = w;
        node.heaviest = `${pointer}/${escapeToken(key)}`;
      }
    };
    for (const [key, value] of Object.entries(schema)) {
      const here = `${pointer}/${escapeToken(key)}`;
      if (SAME_ARRAYS.includes(key) && Array.isArray(value)) {
        value.forEach((v, i) => {
          if (!isSchema(v)) return;
          const branch = this.#add(v, `${here}/${i}`, base);
          // A failing branch of anyOf/oneOf makes an error object even when only the first
          // violation is wanted: about as costly as a check.
          if (key !== "allOf") branch.weight++;
          node.same.push({ node: branch, via: here });
        });
      } else if (SAME_SCHEMAS.includes(key) && isSchema(value)) {
        const inner = this.#add(value, here, base);
        // `not` and `if` make an error object when their subschema fails, as a branch does.
        if (key === "not" || key === "if") inner.weight++;
        node.same.push({ node: inner, via: here });
      } else if ((key === "$ref" || key === "$dynamicRef") && typeof value === "string") {
        node.same.push({ node: `${base}\u0000${value}`, via: here });
      } else if (key === "dependentSchemas" && isMap(value)) {
        for (const [name, v] of Object.entries(value)) {
          if (isSchema(v))
            node.same.push({ node: this.#add(v, `${here}/${escapeToken(name)}`, base), via: here });
        }
      } else if (["$defs", "definitions", "properties", "patternProperties"].includes(key) && isMap(value)) {
        for (const [name, v] of Object.entries(value)) {
          if (isSchema(v)) this.#add(v, `${here}/${escapeToken(name)}`, base);
        }
        if (key === "properties") weigh(key, Math.ceil(Object.keys(value).length / 8));
        if (key === "patternProperties") node.scans += Object.keys(value).length;
      } else if (key === "prefixItems" && Array.isArray(value)) {
        value.forEach((v, i) => {
          if (isSchema(v)) this.#add(v, `${here}/${i}`, base);
        });
      } else if (FREE.has(key)) {
        if (!isSchema(value)) continue;
        const child = this.#add(value, here, base);
        if (key === "contains") child.weight++;
      } else if (key === "required" && Array.isArray(value)) {
        weigh(key, Math.max(1, value.length));
      } else if (key === "dependentRequired" && isMap(value)) {
        weigh(
          key,
          Object.values(value).reduce((n: number, v) => n + 1 + (Array.isArray(v) ? v.length : 0), 0),
        );
      } else if (key === "const") {
        weigh(key, size(value));
      } else if (key === "enum" && Array.isArray(value)) {
        // Scalars are one hash lookup (payload-schema.ts); objects and arrays are compared deeply.
        weigh(
          key,
          value.reduce((n: number, v) => n + (typeof v === "object" && v !== null ? size(v) : 0), 1),
        );
      } else {
        weigh(key, 1);
        if (SCANNING.has(key)) node.scans++;
      }
    }
    if (node.weight === 0) node.weight = 1;
    return node;
  }

  /** The subschema at a pointer of the document. */
  node(pointer: string): Node | undefined {
    return this.#byPointer.get(pointer);
  }

  #resolve(target: string, via: string): Node {
    const [base = "", ref = ""] = target.split("\u0000");
    const fragment = decodeURIComponent(ref.slice(1));
    let node: Node | undefined;
    if (fragment === "" || fragment.startsWith("/")) {
      node = this.#byPointer.get(fragment === "" ? `${base}#` : `${base}${fragment}`);
      if (node === undefined && fragment === "") node = this.#byPointer.get(base);
    } else {
      node = this.#anchors.get(fragment);
    }
    if (node === undefined && fragment.startsWith("/")) {
      // A pointer into a place no keyword marks as a schema (an unknown keyword's value).
      let value: unknown = this.nodes[0]?.schema;
      for (const token of fragment.slice(1).split("/")) {
        const name = token.replaceAll("~1", "/").replaceAll("~0", "~");
        value = Array.isArray(value) ? value[Number(name)] : isMap(value) ? value[name] : undefined;
      }
      if (isSchema(value)) node = this.#add(value, `${this.at}${fragment}`, this.at);
    }
    if (node === undefined) {
      throw new SchemaTooCostly({ pointer: via, detail: `${ref} does not name a subschema of this schema` });
    }
    return node;
  }
}

/** Counts per node: how many times each subschema applies to one payload value. */
type Counts = Map<Node, number>;

/** The result of the analysis: the worst figures, for the bench and the tests. */
export interface SchemaCost {
  /** Keyword checks on the costliest value that can repeat. */
  perValue: number;
  /** Estimated keyword checks over a whole 64 KiB payload. */
  total: number;
  /** Pattern and format scans on one value, at most. */
  scans: number;
}

/**
 * The worst-case cost of validating a 64 KiB payload against `schema`, or SchemaTooCostly naming
 * the keyword that puts it over the limits above. `at` is the schema's own pointer (`/schema`).
 */
export function schemaCost(schema: unknown, at = "/schema"): SchemaCost {
  if (!isSchema(schema)) return { perValue: 1, total: MAX_PAYLOAD_VALUES, scans: 0 };
  const graph = new Graph(schema, at);
  const analysis = new Analysis(graph);
  const single = analysis.explore(new Map([[graph.nodes[0] as Node, 1]]), false, 0, new Set());
  const total = analysis.perValue * MAX_PAYLOAD_VALUES + single;
  if (total > MAX_CHECKS) throw analysis.refusal(total, single > analysis.perValue * MAX_PAYLOAD_VALUES);
  return { perValue: analysis.perValue, total, scans: analysis.scans };
}

class Analysis {
  perValue = 0;
  scans = 0;
  states = 0;
  /** The costliest repeating value's subschemas, and the costliest single one's, for the refusal. */
  #worst: { evaluated: Counts; via: Map<Node, string> } | null = null;
  #worstSingle: { evaluated: Counts; via: Map<Node, string>; load: number } | null = null;
  #memo = new Map<string, number>();

  constructor(readonly graph: Graph) {}

  /**
   * Explores the values reached from one whose entry subschemas are `entries`; returns the checks
   * of the values that occur once (the repeating ones raise `perValue`).
   */
  explore(entries: Counts, repeating: boolean, depth: number, path: Set<string>): number {
    const signature = [...entries].map(([n, c]) => `${n.id}:${c}`).join(",");
    const key = `${repeating ? "r" : "s"}${signature}`;
    const known = this.#memo.get(key);
    if (known !== undefined) return known;
    if (++this.states > MAX_STATES) {
      const [first] = entries.keys();
      throw new SchemaTooCostly({
        pointer: first?.pointer ?? "",
        detail: `is too intricate to bound its validation time (over ${MAX_STATES} combinations of subschemas); simplify it`,
      });
    }
    const { evaluated, via } = expand(entries);
    let load = 0;
    let scans = 0;
    for (const [node, count] of evaluated) {
      load += node.weight * count;
      scans += node.scans * count;
    }
    // A subschema set met again further down is recursion: it can repeat as often as the payload allows.
    const recursive = path.has(signature);
    if (scans > this.scans) this.scans = scans;
    if (scans > MAX_SCANS_PER_VALUE) throw scanRefusal(evaluated, via, scans);
    if ((repeating || recursive) && load > this.perValue) {
      this.perValue = load;
      this.#worst = { evaluated, via };
      if (load > MAX_CHECKS_PER_VALUE) throw this.refusal(load * MAX_PAYLOAD_VALUES);
    }
    if (!repeating && !recursive && load > (this.#worstSingle?.load ?? -1)) {
      this.#worstSingle = { evaluated, via, load };
      if (load > MAX_CHECKS) throw this.refusal(load, true);
    }
    if (recursive || depth >= MAX_DEPTH) return 0;
    let single = repeating ? 0 : load;
    path.add(signature);
    for (const [child, childRepeats] of children(this.graph, evaluated)) {
      single += this.explore(child, repeating || childRepeats, depth + 1, path);
      if (single > MAX_CHECKS) throw this.refusal(single, true);
    }
    path.delete(signature);
    this.#memo.set(key, single);
    return single;
  }

  /** The refusal naming the keyword that weighs most in the costliest value (`single`: one that does not repeat). */
  refusal(total: number, single = false): SchemaTooCostly {
    const worst = single ? this.#worstSingle : this.#worst;
    const blame = new Map<string, number>();
    if (worst) {
      for (const [node, count] of worst.evaluated) {
        const pointer = worst.via.get(node) ?? node.heaviest;
        blame.set(pointer, (blame.get(pointer) ?? 0) + node.weight * count);
      }
    }
    let [pointer = ""] = [...blame].sort((a, b) => b[1] - a[1])[0] ?? [];
    // Mostly subschemas met along several paths: blame the reference to the most repeated one.
    if (worst) {
      let load = 0;
      let repeated = 0;
      let most: Node | null = null;
      for (const [node, count] of worst.evaluated) {
        load += node.weight * count;
        if (count < 2) continue;
        repeated += node.weight * count;
        if (most === null || count > (worst.evaluated.get(most) ?? 0)) most = node;
      }
      const ref = most && worst.via.get(most);
      if (ref && repeated * 2 > load) pointer = ref;
    }
    const keyword = pointer.slice(pointer.lastIndexOf("/") + 1);
    const advice =
      keyword === "anyOf" || keyword === "oneOf"
        ? "use enum instead of an anyOf or oneOf of const, or fewer branches"
        : keyword === "enum" || keyword === "const"
          ? "compare scalars rather than objects and arrays, or fewer values"
          : keyword === "$ref" || keyword === "$dynamicRef"
            ? "reach each definition along one path, not several"
            : "apply fewer and smaller subschemas to the items and members of arrays and maps";
    return new SchemaTooCostly({
      pointer,
      detail: single
        ? `makes validating one payload cost up to ${count(total)} checks (the limit is ${count(MAX_CHECKS)}): ${advice}`
        : `makes validating a 64 KiB payload cost up to ${count(total)} checks (about ${count(this.perValue)} ` +
          `on each of up to ${count(MAX_PAYLOAD_VALUES)} values; the limit is ${MAX_CHECKS_PER_VALUE} per value): ${advice}`,
    });
  }
}

const count = (n: number) => Math.round(n).toLocaleString("en");

function scanRefusal(evaluated: Counts, via: Map<Node, string>, scans: number): SchemaTooCostly {
  let pointer = "";
  let most = -1;
  for (const [node, count] of evaluated) {
    if (node.scans * count > most) {
      most = node.scans * count;
      pointer = via.get(node) ?? node.pointer;
    }
  }
  return new SchemaTooCostly({
    pointer,
    detail: `applies ${scans} pattern and format checks to one value (the limit is ${MAX_SCANS_PER_VALUE}, each scans the whole string): use fewer patterns on one value`,
  });
}

/**
 * Every subschema applied to a value entered with `entries`, with how often (a definition reached
 * along two paths counts twice), and for each the keyword that applied it. Refuses a cycle.
 */
function expand(entries: Counts): { evaluated: Counts; via: Map<Node, string> } {
  const order: Node[] = [];
  const state = new Map<Node, 1 | 2>();
  const visit = (node: Node, from: string) => {
    const seen = state.get(node);
    if (seen === 2) return;
    if (seen === 1) {
      throw new SchemaTooCostly({
        pointer: from,
        detail:
          "loops forever: it applies a subschema to the same value it came from; a reference back must first go into an item or member",
      });
    }
    state.set(node, 1);
    for (const edge of node.same) visit(edge.node as Node, edge.via);
    state.set(node, 2);
    order.push(node);
  };
  for (const node of entries.keys()) visit(node, node.pointer);
  const evaluated: Counts = new Map(entries);
  const via = new Map<Node, string>();
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i] as Node;
    const count = evaluated.get(node) ?? 0;
    for (const edge of node.same) {
      const target = edge.node as Node;
      evaluated.set(target, (evaluated.get(target) ?? 0) + count);
      if (!via.has(target) && !entries.has(target)) via.set(target, edge.via);
    }
  }
  return { evaluated, via };
}

/** The values inside one (members, items, keys) as entry subschema counts, each with whether it repeats. */
function children(graph: Graph, evaluated: Counts): [Counts, boolean][] {
  const names = new Set<string>();
  let prefix = 0;
  for (const node of evaluated.keys()) {
    if (typeof node.schema === "boolean") continue;
    if (isMap(node.schema.properties))
      for (const name of Object.keys(node.schema.properties)) names.add(name);
    if (Array.isArray(node.schema.prefixItems)) prefix = Math.max(prefix, node.schema.prefixItems.length);
  }
  const slots: [Counts, boolean][] = [];
  const slot = (pick: (schema: Record<string, unknown>, pointer: string) => string[], repeats: boolean) => {
    const counts: Counts = new Map();
    for (const [node, count] of evaluated) {
      if (typeof node.schema === "boolean") continue;
      for (const pointer of pick(node.schema, node.pointer)) {
        const target = graph.node(pointer);
        if (target) counts.set(target, (counts.get(target) ?? 0) + count);
      }
    }
    if (counts.size > 0) slots.push([new Map([...counts].sort((a, b) => a[0].id - b[0].id)), repeats]);
  };
  const pointerOf = (pointer: string, ...keys: (string | number)[]) =>
    [pointer, ...keys.map((k) => escapeToken(String(k)))].join("/");
  const others = (s: Record<string, unknown>, p: string, keys: string[]) =>
    keys.filter((k) => isSchema(s[k])).map((k) => pointerOf(p, k));
  const patterns = (s: Record<string, unknown>, p: string) =>
    isMap(s.patternProperties)
      ? Object.keys(s.patternProperties).map((k) => pointerOf(p, "patternProperties", k))
      : [];
  for (const name of names) {
    slot(
      (s, p) =>
        isMap(s.properties) && isSchema(s.properties[name])
          ? [pointerOf(p, "properties", name), ...patterns(s, p)]
          : [...patterns(s, p), ...others(s, p, ["additionalProperties", "unevaluatedProperties"])],
      false,
    );
  }
  slot(
    (s, p) => [...patterns(s, p), ...others(s, p, ["additionalProperties", "unevaluatedProperties"])],
    true,
  );
  slot((s, p) => others(s, p, ["propertyNames"]), true);
  for (let i = 0; i < prefix; i++) {
    slot(
      (s, p) => [
        Array.isArray(s.prefixItems) && isSchema(s.prefixItems[i])
          ? pointerOf(p, "prefixItems", i)
          : isSchema(s.items)
            ? pointerOf(p, "items")
            : "",
        ...others(s, p, ["contains", "unevaluatedItems"]),
      ],
      false,
    );
  }
  slot((s, p) => others(s, p, ["items", "additionalItems", "contains", "unevaluatedItems"]), true);
  return slots;
}
