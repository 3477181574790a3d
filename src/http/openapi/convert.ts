// valibot → JSON Schema (draft 2020-12, as OpenAPI 3.1 uses): the only road from a valibot schema
// into /openapi.json. hono-openapi's `resolver()` reaches it through the vendor registered below,
// so request and response schemas given to describeRoute are converted by these rules.
import { toJsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import { loadVendor } from "hono-openapi";
import type * as v from "valibot";
import { JsonObject } from "../../commit/schemas.ts";
import { NAMED_SCHEMAS } from "./components.ts";

export type Json = Record<string, unknown>;

const CONVERSION = {
  target: "draft-2020-12",
  typeMode: "input",
  errorMode: "throw",
  // The one custom schema of the requests: a JSON object that is not an array.
  overrideSchema: ({ valibotSchema }) => (valibotSchema === JsonObject ? { type: "object" } : undefined),
  overrideAction: ({ valibotAction, jsonSchema }) => {
    // A check (e.g. "a real calendar date") refines what JSON Schema already says; nothing to add.
    if (valibotAction.type === "check") return jsonSchema;
    if (valibotAction.type === "regex") {
      const regex = (valibotAction as unknown as { requirement: RegExp }).requirement;
      if (regex.flags === "i") return { ...jsonSchema, pattern: caseInsensitive(regex.source) };
    }
    return undefined;
  },
} satisfies Parameters<typeof toJsonSchema>[1];

/** JSON Schema patterns have no flags: spell `i` out as `[Tt]` (and `a-z` classes as `a-zA-Z`). */
export function caseInsensitive(source: string): string {
  const other = (ch: string) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase());
  const letter = /[A-Za-z]/;
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    if (ch === "\\") {
      const escaped =
        /^\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[pPk][{<][^}>]*[}>]|c[A-Za-z]|.)/su.exec(
          source.slice(i),
        )?.[0];
      out += escaped ?? ch;
      i += (escaped?.length ?? 1) - 1;
    } else if (inClass) {
      const range = /^([A-Za-z])-([A-Za-z])/.exec(source.slice(i));
      if (range?.[1] && range[2] && other(range[1]) !== range[1] && letter.test(range[2])) {
        out += `${range[0]}${other(range[1])}-${other(range[2])}`;
        i += 2;
      } else {
        if (ch === "]") inClass = false;
        out += letter.test(ch) ? ch + other(ch) : ch;
      }
    } else if (ch === "[") {
      inClass = true;
      out += ch;
      if (source[i + 1] === "^") out += source[++i];
    } else if (ch === "(" && source.startsWith("(?<", i) && !/^\(\?<[=!]/.test(source.slice(i))) {
      const group = /^\(\?<[^>]*>/.exec(source.slice(i))?.[0] ?? ch;
      out += group;
      i += group.length - 1;
    } else {
      out += letter.test(ch) ? `[${ch}${other(ch)}]` : ch;
    }
  }
  return out;
}

/** `#/$defs/X` → `#/components/schemas/X`, without `$schema` and `$defs` (the document holds those). */
function withComponentRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withComponentRefs);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$schema" || key === "$defs") continue;
    out[key] =
      key === "$ref" && typeof value === "string"
        ? value.replace(/^#\/\$defs\//, "#/components/schemas/")
        : withComponentRefs(value);
  }
  return out;
}

/** One schema as the document holds it: a named schema (components.ts) anywhere inside is a $ref. */
export function jsonSchema(schema: v.GenericSchema): Json {
  return withComponentRefs(toJsonSchema(schema, { ...CONVERSION, definitions: NAMED_SCHEMAS })) as Json;
}

/** One schema on its own, every part inline (no $ref): what an MCP tool's input schema must be. */
export function standaloneJsonSchema(schema: v.GenericSchema): Json {
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, CONVERSION) as Json;
  return rest;
}

/** components.schemas: every named schema. */
export function componentSchemas(): Record<string, Json> {
  const schemas = withComponentRefs(toJsonSchemaDefs(NAMED_SCHEMAS, CONVERSION)) as Record<string, Json>;
  if (schemas.Timestamp) schemas.Timestamp = { ...schemas.Timestamp, format: "date-time" };
  return schemas;
}

// hono-openapi converts the schemas of `resolver(schema)` through the vendor registered for the
// schema's library; registering ours here means these rules apply (and nothing is loaded lazily).
loadVendor("valibot", {
  toOpenAPISchema: async (schema) => jsonSchema(schema as unknown as v.GenericSchema),
});
