// Typed problem errors (RFC 9457, DESIGN §3): every non-2xx answer outboxd gives is
// application/problem+json, and becomes one OutboxdError with its fields.
export class OutboxdError extends Error {
    name = "OutboxdError";
    /** The HTTP status (0 when no answer came: the request failed on the network every time). */
    status;
    /** The problem type URI, e.g. `https://outboxd.dev/problems/version-conflict`. */
    type;
    title;
    detail;
    /** Validation errors (422), each naming its field. */
    errors;
    /**
     * Version conflicts (409) and failed preconditions (412): the record's version now, null if it
     * never existed; undefined for other problems.
     */
    currentVersion;
    /** The whole problem body as sent, for fields this class does not name. */
    body;
    constructor(status, body, options) {
        const detail = typeof body.detail === "string" ? body.detail : "";
        const title = typeof body.title === "string" ? body.title : `HTTP ${status}`;
        super(detail ? `${title}: ${detail}` : title, options);
        this.status = status;
        this.type = typeof body.type === "string" ? body.type : "about:blank";
        this.title = title;
        this.detail = detail;
        this.errors = Array.isArray(body.errors) ? body.errors : [];
        this.currentVersion =
            typeof body.currentVersion === "number" || body.currentVersion === null
                ? body.currentVersion
                : undefined;
        this.body = body;
    }
    /** The last segment of `type`: `version-conflict`, `validation`, `idempotency-in-progress`, … */
    get slug() {
        return this.type.slice(this.type.lastIndexOf("/") + 1);
    }
}
