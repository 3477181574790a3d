// Every error a client can cause is a Problem (RFC 9457). Operations throw them; the HTTP
// layer renders them in one place (src/http/errors.ts). Anything else is a bug and a 500.
export const PROBLEM_BASE = "https://outboxd.dev/problems/";

export interface FieldError {
  /** JSON Pointer into the request, e.g. `/records/0/id`; headers as `header:If-Match`. */
  pointer: string;
  detail: string;
}

const MAX_PROBLEM_DETAIL = 1000;

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
      // A path segment named in a detail (a 404's id) is the only request text a detail can
      // hold; it is cut so that a megabyte of URL is not answered back whole.
      detail:
        this.detail.length > MAX_PROBLEM_DETAIL
          ? `${this.detail.slice(0, MAX_PROBLEM_DETAIL - 1)}…`
          : this.detail,
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
  invalid: (errors: FieldError[]) => {
    const listed = errors.slice(0, MAX_LISTED_ERRORS).map(boundedError);
    const more = errors.length - listed.length;
    return new Problem(
      422,
      "validation",
      "Invalid request",
      listed.map((e) => `${e.pointer}: ${e.detail}`).join("; ") + (more > 0 ? `; and ${more} more` : ""),
      more > 0 ? { errors: listed, errorsOmitted: more } : { errors: listed },
    );
  },
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
  methodNotAllowed: (detail: string) => new Problem(405, "method-not-allowed", "Method not allowed", detail),
  unavailable: (detail: string) => new Problem(503, "unavailable", "Service unavailable", detail),
  /** A write sent to a remote database whose answer never came: it may or may not have committed. */
  outcomeUnknown: (detail: string) => new Problem(503, "outcome-unknown", "Outcome unknown", detail),
};

/**
 * A 422 lists at most this many field errors, each with a pointer of at most MAX_POINTER_CHARS
 * and a detail of at most MAX_DETAIL_CHARS, so a problem stays a few KiB whatever the input (a
 * body of 100,000 wrong items, or a 900 KB unknown key, would otherwise come back whole).
 */
export const MAX_LISTED_ERRORS = 10;
const MAX_POINTER_CHARS = 200;
const MAX_DETAIL_CHARS = 200;

/**
 * A pointer too long to show is cut back to the longest run of whole segments that fits: it
 * then names an ancestor of the field, which is still true, and never a made-up path.
 */
function boundedError(error: FieldError): FieldError {
  let { pointer, detail } = error;
  if (pointer.length > MAX_POINTER_CHARS) {
    const cut = pointer.lastIndexOf("/", MAX_POINTER_CHARS);
    pointer =
      pointer.startsWith("header:") || pointer.startsWith("path:") || cut <= 0 ? "" : pointer.slice(0, cut);
    detail = `${detail} (in a field below this one whose name is too long to show)`;
  }
  if (detail.length > MAX_DETAIL_CHARS) detail = `${detail.slice(0, MAX_DETAIL_CHARS - 1)}…`;
  return { pointer, detail };
}

export function invalidField(pointer: string, detail: string): Problem {
  return problems.invalid([{ pointer, detail }]);
}
