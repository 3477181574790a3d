// JSON Schema (draft 2020-12) for event payloads, on ajv: well kept, compiles each schema to a
// function once (the catalog caches it per schema text), and runs under Bun, Deno and the
// compiled executable alike. A schema may only reference itself: a remote `$ref` would make
// commits depend on the network, so it is refused at registration, as is anything ajv cannot
// compile. Nothing here can fail at commit time except the payload itself. ajv is a large
// module that most instances never need: the catalog imports this file only when a type with a
// schema exists (catalog.ts), so it stays off the start path.
import { _, Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { type FieldError, Problem, problems } from "../lib/problem.ts";
import { linearFormats, linearRegExp, regExpRefusal } from "./linear-regexp.ts";
import { SchemaTooCostly, schemaCost } from "./schema-cost.ts";

// ajv-formats is CommonJS; its default export arrives wrapped under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";
/** DESIGN §9: a schema is at most 64 KiB of JSON. */
export const MAX_SCHEMA_BYTES = 64 * 1024;

/** A compiled payload schema: the payload's violations as field errors, pointers under `at`. */
export type PayloadValidator = (payload: unknown, at: string) => FieldError[];

function newAjv(allErrors: boolean): Ajv2020 {
  // allErrors (on the second validator): the client sees every violation at once. strict off:
  // unknown keywords are annotations in JSON Schema, not mistakes. addUsedSchema off: two types
  // whose schemas carry the same $id must not collide in one shared registry. code.regExp:
  // `pattern` and `patternProperties` run on a linear-time engine (./linear-regexp.ts).
  const ajv = new Ajv2020({
    allErrors,
    strict: false,
    addUsedSchema: false,
    validateFormats: true,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  for (const [name, format] of Object.entries(linearFormats())) ajv.addFormat(name, format);
  // ajv compares a value with each `enum` value in turn; scalars here are one hash lookup, so an
  // enum of thousands of strings costs what one of three does (./schema-cost.ts counts it so).
  ajv.removeKeyword("enum");
  ajv.addKeyword({
    keyword: "enum",
    schemaType: "array",
    errors: false,
    error: {
      message: "must be equal to one of the allowed values",
      params: ({ schema }) => _`{allowedValues: ${schema}}`,
    },
    compile: (values: unknown[]) => {
      const scalars = new Set(values.filter((v) => typeof v !== "object" || v === null));
      const composites = values.filter((v) => typeof v === "object" && v !== null);
      return (data: unknown) =>
        typeof data !== "object" || data === null
          ? scalars.has(data)
          : composites.some((value) => deepEqual(value, data));
    },
  });
  return ajv;
}

/** JSON equality: objects whatever their key order, numbers by value. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ka = Object.keys(a);
  const kb = b as Record<string, unknown>;
  return (
    ka.length === Object.keys(kb).length &&
    ka.every((k) => Object.hasOwn(kb, k) && deepEqual((a as Record<string, unknown>)[k], kb[k]))
  );
}

// Two compilers: the first stops at the first violation (what a valid payload costs, and what
// decides), the second collects every violation of a payload the first refused, when the payload
// is small enough for that to stay within the cost limit (./schema-cost.ts): with every error
// collected, each failing check of each value makes an error object.
const firstError = newAjv(false);
const allErrors = newAjv(true);

/**
 * Compiles a payload schema or throws a 422 whose pointers start at `at` (e.g. `/schema`).
 * `schema` is the parsed JSON value. A new schema (`stored` false) must also keep validation
 * bounded: every pattern runs on the linear-time engine, `uniqueItems` needs scalar items, and the
 * worst-case cost of validating a 64 KiB payload is within the limit (./schema-cost.ts).
 * A stored schema is compiled as it was accepted, except for patterns the engine cannot run and
 * costs over the limit: those throw UnsupportedSchema (the catalog keeps the type and refuses its events).
 */
export function compilePayloadSchema(schema: unknown, at = "/schema", stored = false): PayloadValidator {
  const errors: FieldError[] = [];
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    if (typeof schema !== "boolean")
      throw problems.invalid([{ pointer: at, detail: "must be a JSON Schema (an object or a boolean)" }]);
  }
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > MAX_SCHEMA_BYTES) {
    errors.push({ pointer: at, detail: `is ${bytes} bytes of JSON; the limit is ${MAX_SCHEMA_BYTES}` });
  }
  const dialect = (schema as { $schema?: unknown } | null)?.$schema;
  if (dialect !== undefined && dialect !== DRAFT_2020_12 && dialect !== `${DRAFT_2020_12}#`) {
    errors.push({ pointer: `${at}/$schema`, detail: `must be ${DRAFT_2020_12} (or absent)` });
  }
  const unsupported: FieldError[] = [];
  visitKeywords(schema, at, (key, value, here, parent) => {
    if ((key === "$ref" || key === "$dynamicRef") && typeof value === "string" && !value.startsWith("#")) {
      errors.push({
        pointer: here,
        detail: "only references within the schema (#…) are allowed, not remote ones",
      });
    }
    if (key === "pattern" && typeof value === "string") patternRefusal(value, here, unsupported);
    if (key === "patternProperties" && typeof value === "object" && value !== null && !Array.isArray(value)) {
      for (const name of Object.keys(value))
        patternRefusal(name, `${here}/${escapeToken(name)}`, unsupported);
    }
    if (key === "uniqueItems" && value === true && !stored && !hasScalarItems(parent)) {
      errors.push({
        pointer: here,
        detail:
          'needs "items" with a scalar "type" (string, number, integer, boolean or null): comparing objects or arrays costs quadratic time',
      });
    }
  });
  let perValue = 1;
  if (errors.length === 0) {
    try {
      perValue = Math.max(1, schemaCost(schema, at).perValue);
    } catch (error) {
      if (!(error instanceof SchemaTooCostly)) throw error;
      unsupported.push(error.error);
    }
  }
  if (stored && unsupported.length > 0) throw new UnsupportedSchema(unsupported);
  errors.push(...unsupported);
  if (errors.length > 0) throw problems.invalid(errors);
  let first: ValidateFunction;
  let every: ValidateFunction;
  try {
    first = firstError.compile(schema as object);
    every = allErrors.compile(schema as object);
  } catch (error) {
    throw problems.invalid([
      { pointer: at, detail: `does not compile: ${error instanceof Error ? error.message : String(error)}` },
    ]);
  }
  return (payload, at) => {
    if (first(payload)) return [];
    let validate = first;
    if (countValues(payload, MAX_ERROR_CHECKS / perValue)) {
      every(payload);
      validate = every;
    }
    return (validate.errors ?? []).map((error) => fieldError(error, at));
  };
}

/**
 * The checks over which every violation is still collected; a larger payload that fails reports
 * its first violation (a problem lists 10 anyway, src/lib/problem.ts).
 */
const MAX_ERROR_CHECKS = 16 * 1024;

/** Whether `value` holds at most `limit` JSON values (stops counting past it). */
function countValues(value: unknown, limit: number): boolean {
  let left = limit;
  const walk = (v: unknown): boolean => {
    if (--left < 0) return false;
    if (typeof v !== "object" || v === null) return true;
    for (const item of Array.isArray(v) ? v : Object.values(v)) if (!walk(item)) return false;
    return true;
  };
  return walk(value);
}

/**
 * A stored schema whose patterns the linear-time engine cannot run, or whose validation cost is
 * over the limit (./schema-cost.ts): its events are refused.
 */
export class UnsupportedSchema extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.pointer}: ${e.detail}`).join("; "));
  }
}

/** The events of a type whose stored schema cannot be run: 422 `schema-unsupported`. */
export function schemaUnsupported(type: string, pointer: string): Problem {
  return new Problem(
    422,
    "schema-unsupported",
    "Schema unsupported",
    `the schema of ${type} has patterns the linear-time engine cannot run or costs more to validate than the limit; replace the event type's schema`,
    {
      errors: [
        { pointer, detail: "its event type's schema must be replaced before such events are accepted" },
      ],
    },
  );
}

function patternRefusal(pattern: string, pointer: string, errors: FieldError[]): void {
  const why = regExpRefusal(pattern);
  if (why !== null) errors.push({ pointer, detail: why });
}

const SCALAR_TYPES = new Set(["string", "number", "integer", "boolean", "null"]);

/** Whether a schema's `items` is a schema whose `type` is scalar (one, or a list of them). */
function hasScalarItems(parent: Record<string, unknown>): boolean {
  const items = parent.items;
  if (typeof items !== "object" || items === null || Array.isArray(items)) return false;
  const type = (items as { type?: unknown }).type;
  const types = Array.isArray(type) ? type : [type];
  return types.length > 0 && types.every((t) => typeof t === "string" && SCALAR_TYPES.has(t));
}

const escapeToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * Calls `visit` for every keyword of every subschema, with its pointer and the schema holding
 * it. The keys of `properties`, `$defs`… are names (each value a schema); the values of `const`,
 * `enum`… are instances, not schemas: a "$ref" or "pattern" key inside them is data.
 */
function visitKeywords(
  node: unknown,
  at: string,
  visit: (key: string, value: unknown, here: string, parent: Record<string, unknown>) => void,
  namesMap = false,
): void {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) visitKeywords(item, `${at}/${i}`, visit);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}/${escapeToken(key)}`;
    if (namesMap) {
      visitKeywords(value, here, visit);
      continue;
    }
    visit(key, value, here, node as Record<string, unknown>);
    if (INSTANCE_KEYWORDS.has(key)) continue;
    visitKeywords(value, here, visit, NAME_MAPS.has(key));
  }
}

const INSTANCE_KEYWORDS = new Set(["const", "enum", "examples", "default"]);
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

function fieldError(error: ErrorObject, at: string): FieldError {
  const params = error.params as Record<string, unknown>;
  const token = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");
  // Point at the offending member itself where ajv names it, not at its parent object.
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    return {
      pointer: `${at}${error.instancePath}/${token(params.missingProperty)}`,
      detail: "is required by the event type's schema",
    };
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return {
      pointer: `${at}${error.instancePath}/${token(params.additionalProperty)}`,
      detail: "is not allowed by the event type's schema",
    };
  }
  return {
    pointer: `${at}${error.instancePath}`,
    detail: `${error.message ?? "is invalid"} (event type schema)`,
  };
}
