/** One field that failed validation: a JSON Pointer into the request (headers as `header:Name`). */
export interface FieldError {
    pointer: string;
    detail: string;
}
export declare class OutboxdError extends Error {
    readonly name = "OutboxdError";
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
    constructor(status: number, body: Record<string, unknown>, options?: ErrorOptions);
    /** The last segment of `type`: `version-conflict`, `validation`, `idempotency-in-progress`, … */
    get slug(): string;
}
