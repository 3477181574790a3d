// JSON Schema (draft 2020-12) for event payloads, on ajv: well kept, compiles each schema to a
// function once (the catalog caches it per schema text), and runs under Bun, Deno and the
// compiled executable alike. A schema may only reference itself: a remote `$ref` would make
// commits depend on the network, so it is refused at registration, as is anything ajv cannot
// compile. Nothing here can fail at commit time except the payload itself. ajv is a large
// module that most instances never need: the catalog imports this file only when a type with a
// schema exists (catalog.ts), so it stays off the start path.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { type FieldError, problems } from "../lib/problem.ts";

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
  const ajv = new Ajv2020({ allErrors: true, strict: false, addUsedSchema: false, validateFormats: true });
  addFormats(ajv);
  return ajv;
}

const ajv = newAjv();

/**
 * Compiles a payload schema or throws a 422 whose pointers start at `at` (e.g. `/schema`).
 * `schema` is the parsed JSON value.
 */
export function compilePayloadSchema(schema: unknown, at = "/schema"): PayloadValidator {
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
  findRemoteRefs(schema, at, errors);
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

/** Every `$ref` / `$dynamicRef` must point into the schema itself (`#…`). */
function findRemoteRefs(node: unknown, at: string, errors: FieldError[], namesMap = false): void {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) findRemoteRefs(item, `${at}/${i}`, errors);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (namesMap) {
      // The keys of `properties`, `$defs`… are names; each value is a schema.
      findRemoteRefs(value, here, errors);
      continue;
    }
    if ((key === "$ref" || key === "$dynamicRef") && typeof value === "string" && !value.startsWith("#")) {
      errors.push({
        pointer: here,
        detail: "only references within the schema (#…) are allowed, not remote ones",
      });
    }
    // Instance values, not subschemas: a "$ref" key inside them is data.
    if (INSTANCE_KEYWORDS.has(key)) continue;
    findRemoteRefs(value, here, errors, NAME_MAPS.has(key));
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
