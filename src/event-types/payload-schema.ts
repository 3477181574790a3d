// JSON Schema (draft 2020-12) for event payloads, on ajv: well kept, compiles each schema to a
// function once (the catalog caches it per schema text), and runs under Bun, Deno and the
// compiled executable alike. A schema may only reference itself: a remote `$ref` would make
// commits depend on the network, so it is refused at registration, as is anything ajv cannot
// compile. Nothing here can fail at commit time except the payload itself. ajv is a large
// module that most instances never need: the catalog imports this file only when a type with a
// schema exists (catalog.ts), so it stays off the start path.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { type FieldError, Problem, problems } from "../lib/problem.ts";
import { linearFormats, linearRegExp, regExpRefusal } from "./linear-regexp.ts";

// ajv-formats is CommonJS; its default export arrives wrapped under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";
/** DESIGN §9: a schema is at most 64 KiB of JSON. */
export const MAX_SCHEMA_BYTES = 64 * 1024;

/** A compiled payload schema: the payload's violations as field errors, pointers under `at`. */
export type PayloadValidator = (payload: unknown, at: string) => FieldError[];

function newAjv(): Ajv2020 {
  // allErrors: the client sees every violation at once. strict off: unknown keywords are
  // annotations in JSON Schema, not mistakes. addUsedSchema off: two types whose schemas carry
  // the same $id must not collide in one shared registry.
  // code.regExp: `pattern` and `patternProperties` run on a linear-time engine (./linear-regexp.ts).
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    addUsedSchema: false,
    validateFormats: true,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  for (const [name, format] of Object.entries(linearFormats())) ajv.addFormat(name, format);
  return ajv;
}

const ajv = newAjv();

/**
 * Compiles a payload schema or throws a 422 whose pointers start at `at` (e.g. `/schema`).
 * `schema` is the parsed JSON value. A new schema (`stored` false) must also keep validation
 * bounded: every pattern runs on the linear-time engine, and `uniqueItems` needs scalar items.
 * A stored schema is compiled as it was accepted, except for patterns the engine cannot run:
 * those throw UnsupportedSchema (the catalog keeps the type and refuses its events).
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
  if (stored && unsupported.length > 0) throw new UnsupportedSchema(unsupported);
  errors.push(...unsupported);
  if (errors.length > 0) throw problems.invalid(errors);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object);
  } catch (error) {
    throw problems.invalid([
      { pointer: at, detail: `does not compile: ${error instanceof Error ? error.message : String(error)}` },
    ]);
  }
  return (payload, at) => payloadErrors(validate, payload, at);
}

/** A stored schema whose patterns the linear-time engine cannot run: its events are refused. */
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
    `the schema of ${type} has patterns the linear-time engine cannot run; replace the event type's schema`,
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

/** The payload's violations as field errors, pointers under `at` (e.g. `/events/0/payload`). */
function payloadErrors(validate: ValidateFunction, payload: unknown, at: string): FieldError[] {
  if (validate(payload)) return [];
  return (validate.errors ?? []).map((error) => fieldError(error, at));
}

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
