// Typed problem errors (RFC 9457, DESIGN §3): every non-2xx answer outboxd gives is
// application/problem+json, and becomes one OutboxdError with its fields.

/** One field that failed validation: a JSON Pointer into the request (headers as `header:Name`). */
export interface FieldError {
  pointer: string;
  detail: string;
}

export class OutboxdError extends Error {
  override readonly name = "OutboxdError";
  /** The HTTP status (0 when no answer came: the request failed on the network every time). */
  readonly status: number;
  /** The problem type URI, e.g. `https://outboxd.dev/problems/version-conflict`. */
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** Validation errors (422), each naming its field. */
  readonly errors: FieldError[];
  /**
   * Version conflicts (409) and failed preconditions (412): the record's version now, null if it
   * never existed; undefined for other problems.
   */
  readonly currentVersion: number | null | undefined;
  /** The whole problem body as sent, for fields this class does not name. */
  readonly body: Record<string, unknown>;

  constructor(status: number, body: Record<string, unknown>, options?: ErrorOptions) {
    const detail = typeof body.detail === "string" ? body.detail : "";
    const title = typeof body.title === "string" ? body.title : `HTTP ${status}`;
    super(detail ? `${title}: ${detail}` : title, options);
    this.status = status;
    this.type = typeof body.type === "string" ? body.type : "about:blank";
    this.title = title;
    this.detail = detail;
    this.errors = Array.isArray(body.errors) ? (body.errors as FieldError[]) : [];
    this.currentVersion =
      typeof body.currentVersion === "number" || body.currentVersion === null
        ? (body.currentVersion as number | null)
        : undefined;
    this.body = body;
  }

  /** The last segment of `type`: `version-conflict`, `validation`, `idempotency-in-progress`, … */
  get slug(): string {
    return this.type.slice(this.type.lastIndexOf("/") + 1);
  }
}
