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
  const result = v.safeParse(schema, input, { abortEarly: false });
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
