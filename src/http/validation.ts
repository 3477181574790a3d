import * as v from "valibot";
import { type FieldError, problems } from "../lib/problem.ts";

/** A JSON Pointer (RFC 6901) for a valibot issue path. */
export function pointer(path: readonly (string | number)[]): string {
  return path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/** Validates `input` against `schema`, or throws a 422 problem naming every offending field. */
export function validate<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  prefix = "",
): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: false, message: fixedMessage });
  if (result.success) return result.output;
  const errors: FieldError[] = result.issues.map((issue) => {
    const path = (issue.path ?? []).map((item) => item.key as string | number);
    const unknownKey = issue.type === "strict_object" && issue.expected === "never";
    return {
      pointer: prefix + pointer(path),
      detail: unknownKey ? "unknown field" : issue.message,
    };
  });
  throw problems.invalid(errors);
}

/**
 * The message of every rule whose schema gives none. valibot's own messages quote the value
 * received (`Invalid type: Expected boolean but received "whsec_…"`), which would send a
 * token, a secret or a megabyte of input back into client and proxy logs: a problem names
 * the field (its pointer) and the rule, never what was sent. Only the schema's side of a rule
 * (a length, a bound) appears; messages written in the schemas are fixed texts too.
 */
function fixedMessage(issue: v.BaseIssue<unknown>): string {
  const limit = typeof issue.requirement === "number" ? issue.requirement : undefined;
  switch (issue.type) {
    case "string":
      return "must be a string";
    case "number":
      return "must be a number";
    case "boolean":
      return "must be true or false";
    case "array":
      return "must be an array";
    case "object":
    case "strict_object":
    case "loose_object":
    case "object_with_rest":
    case "record":
      // A key the object needs and the input lacks: valibot names it as the expected `"key"`.
      return issue.received === "undefined" && issue.expected?.startsWith('"')
        ? "is required"
        : "must be a JSON object";
    case "literal":
    case "picklist":
    case "enum":
      return "is not one of the allowed values";
    case "union":
    case "variant":
      return "does not match any of the allowed forms";
    case "integer":
    case "safe_integer":
      return "must be an integer";
    case "min_length":
      return limit === undefined ? "is too short" : `must have at least ${limit} items or characters`;
    case "max_length":
      return limit === undefined ? "is too long" : `must have at most ${limit} items or characters`;
    case "min_value":
      return "is too small";
    case "max_value":
      return "is too large";
    case "regex":
      return "has the wrong format";
    case "uuid":
      return "must be a UUID";
    default:
      return "is invalid";
  }
}
