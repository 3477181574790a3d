// Every error a client can cause is a Problem (RFC 9457). Operations throw them; the HTTP
// layer renders them in one place (src/http/errors.ts). Anything else is a bug and a 500.
export const PROBLEM_BASE = "https://outboxd.dev/problems/";

export interface FieldError {
  /** JSON Pointer into the request, e.g. `/records/0/id`; headers as `header:If-Match`. */
  pointer: string;
  detail: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    /** Short slug appended to PROBLEM_BASE, e.g. `version-conflict`. */
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = "Problem";
  }

  toJSON(): Record<string, unknown> {
    return {
      type: PROBLEM_BASE + this.slug,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...this.extra,
    };
  }
}

export const problems = {
  badJson: (detail: string) => new Problem(400, "malformed-json", "Malformed JSON", detail),
  tooLarge: (limit: number) =>
    new Problem(
      413,
      "body-too-large",
      "Request body too large",
      `The body exceeds the limit of ${limit} bytes.`,
    ),
  invalid: (errors: FieldError[]) =>
    new Problem(
      422,
      "validation",
      "Invalid request",
      errors.map((e) => `${e.pointer}: ${e.detail}`).join("; "),
      {
        errors,
      },
    ),
  versionConflict: (detail: string, currentVersion: number | null, pointer?: string) =>
    new Problem(409, "version-conflict", "Version conflict", detail, {
      currentVersion,
      ...(pointer ? { errors: [{ pointer, detail }] } : {}),
    }),
  preconditionFailed: (detail: string, currentVersion: number | null) =>
    new Problem(412, "precondition-failed", "Precondition failed", detail, { currentVersion }),
  conflict: (slug: string, detail: string, extra: Record<string, unknown> = {}) =>
    new Problem(409, slug, "Conflict", detail, extra),
  notFound: (detail: string, extra: Record<string, unknown> = {}) =>
    new Problem(404, "not-found", "Not found", detail, extra),
  unauthorized: (detail: string) => new Problem(401, "unauthorized", "Unauthorized", detail),
  forbidden: (detail: string) => new Problem(403, "forbidden", "Forbidden", detail),
  unavailable: (detail: string) => new Problem(503, "unavailable", "Service unavailable", detail),
};

export function invalidField(pointer: string, detail: string): Problem {
  return problems.invalid([{ pointer, detail }]);
}
