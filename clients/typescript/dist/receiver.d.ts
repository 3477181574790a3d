/**
 * The event in a delivery's body. `id` is also the webhook-id header, the same on every retry;
 * `sequence` counts 1, 2, 3, … per `aggregate` (e.g. "returns/r-123"), and is 0 in the
 * "outboxd.ping" that an endpoint test sends; `previousSequence` is the aggregate's latest earlier
 * sequence that was sent to this endpoint at all (its type patterns, filter or explicit
 * endpoints leave gaps), null for none; `timestamp` is the commit time (RFC 3339); `data` is the
 * payload given at commit.
 */
export interface OutboxEvent {
    id: string;
    type: string;
    timestamp: string;
    aggregate: string;
    sequence: number;
    /** Absent in bodies from servers before it. */
    previousSequence?: number | null;
    data: unknown;
}
/** A delivery as your HTTP framework hands it over. */
export interface WebhookRequest {
    /** A Fetch `Headers` or a plain object such as Node's `req.headers`; names are case-insensitive. */
    headers: Headers | Record<string, string | string[] | undefined>;
    /** The body exactly as received, never re-serialised JSON: the signature covers these bytes. */
    body: string | Uint8Array;
}
/** Options of verifyWebhook. */
export interface VerifyOptions {
    /** Largest accepted clock difference between outboxd and this receiver, in seconds (300). */
    toleranceSeconds?: number;
    /** The current time as a Date or epoch milliseconds, for tests. */
    now?: Date | number;
}
/** Why a delivery was refused; a malformed webhook-timestamp counts as missing_header. */
export type WebhookErrorCode = "missing_header" | "timestamp_too_old" | "timestamp_in_future" | "bad_signature" | "bad_body";
/** A delivery to refuse (answer 400); outboxd retries it until its deadline, then dead-letters it. */
export declare class WebhookError extends Error {
    readonly code: WebhookErrorCode;
    constructor(code: WebhookErrorCode, message: string);
}
/**
 * Returns the event of a delivery that outboxd signed within the tolerance, or throws a
 * WebhookError. A misconfigured secret throws a TypeError instead: no retry can fix it. During
 * a rotation pass both secrets: outboxd signs with every active secret and any match passes.
 */
export declare function verifyWebhook(request: WebhookRequest, secrets: string | readonly string[], options?: VerifyOptions): Promise<OutboxEvent>;
/** What the inbox keeps per aggregate: the last applied event. */
export interface InboxEntry {
    sequence: number;
    eventId: string;
}
/**
 * What applyOnce did: "duplicate" means this event (or its sequence) was applied before,
 * "stale" that a newer one was. `missed` counts the sequences skipped before this one: 0
 * normally, more when older events were dead-lettered, this receiver started late, or they were
 * never meant for this endpoint. `missedForEndpoint` tells the last case apart: true only when
 * an event that was sent to this endpoint (its `previousSequence`) was never applied here.
 */
export interface ApplyResult {
    result: "applied" | "duplicate" | "stale";
    missed: number;
    missedForEndpoint: boolean;
}
/**
 * Where applyOnce keeps, per aggregate, the last applied sequence and event id. `Tx` is what
 * your database's transaction hands out (a connection, a client): get, put and your apply all
 * receive it, so they run in that one transaction. memoryStore() is a store; docs/receivers.md
 * builds SQLite and Postgres ones from INBOX_SQL.
 */
export interface InboxStore<Tx = unknown> {
    /** Runs `fn` as one transaction: commit when it resolves, roll back when it throws. */
    transaction<T>(aggregate: string, fn: (tx: Tx) => Promise<T>): Promise<T>;
    /** The aggregate's last applied entry, if any (INBOX_SQL.*.get). */
    get(tx: Tx, aggregate: string): InboxEntry | null | undefined | Promise<InboxEntry | null | undefined>;
    /** Records `entry` unless its sequence or a later one is there; true if it did (INBOX_SQL.*.put). */
    put(tx: Tx, aggregate: string, entry: InboxEntry): boolean | Promise<boolean>;
}
/**
 * Runs `apply` for a verified event unless this event or a newer one of its aggregate was
 * applied before. `apply` runs inside the store's transaction with its `tx`, so the change and
 * the recorded sequence commit together or not at all; if it throws, the error propagates
 * (answer 5xx and outboxd retries). Answer 2xx with the result for "duplicate" and "stale" too.
 */
export declare function applyOnce<Tx>(event: OutboxEvent, store: InboxStore<Tx>, apply: (event: OutboxEvent, tx: Tx) => unknown): Promise<ApplyResult>;
/**
 * An inbox in this process's memory, for tests, demos and receivers whose state is in memory
 * too: it forgets on restart. Events of one aggregate run one at a time, as a row lock would
 * make them, and a throwing `apply` leaves no record, as a rollback would.
 */
export declare function memoryStore(): InboxStore<undefined>;
/**
 * The inbox as a table in your own database, so that recording a sequence and applying its
 * change are one transaction. Put `create` in your migrations. `get` takes (aggregate); `put`
 * takes (aggregate, sequence, eventId) and writes only a newer sequence, so its row count
 * (SQLite `changes`, Postgres `rowCount`) says whether this delivery won. Begin the transaction
 * with BEGIN IMMEDIATE on SQLite; on Postgres the default READ COMMITTED is right (the upsert
 * waits for a concurrent one on the same aggregate, then re-checks its WHERE).
 */
export declare const INBOX_SQL: {
    readonly sqlite: {
        readonly create: "CREATE TABLE outboxd_inbox (aggregate TEXT PRIMARY KEY, sequence INTEGER NOT NULL, event_id TEXT NOT NULL)";
        readonly get: "SELECT sequence, event_id AS \"eventId\" FROM outboxd_inbox WHERE aggregate = ?";
        readonly put: "INSERT INTO outboxd_inbox (aggregate, sequence, event_id) VALUES (?, ?, ?)\n      ON CONFLICT (aggregate) DO UPDATE SET sequence = excluded.sequence, event_id = excluded.event_id\n      WHERE excluded.sequence > outboxd_inbox.sequence";
    };
    readonly postgres: {
        readonly create: "CREATE TABLE outboxd_inbox (aggregate TEXT PRIMARY KEY, sequence BIGINT NOT NULL, event_id TEXT NOT NULL)";
        readonly get: "SELECT sequence, event_id AS \"eventId\" FROM outboxd_inbox WHERE aggregate = $1";
        readonly put: "INSERT INTO outboxd_inbox (aggregate, sequence, event_id) VALUES ($1, $2, $3)\n      ON CONFLICT (aggregate) DO UPDATE SET sequence = excluded.sequence, event_id = excluded.event_id\n      WHERE excluded.sequence > outboxd_inbox.sequence";
    };
};
/** Options of consume(). */
export interface ConsumeOptions<Tx> {
    /** outboxd's base URL, e.g. "https://outboxd.example.com". */
    url: string;
    /** A token with the `consume` scope. */
    token: string;
    /** The pull endpoint's id (ep_…). */
    endpoint: string;
    store: InboxStore<Tx>;
    /** Your change, as for applyOnce; if it throws, the delivery is nacked and comes again later. */
    apply: (event: OutboxEvent, tx: Tx) => unknown;
    /** Deliveries per poll, 1-500 (100). */
    max?: number;
    /** How long a poll waits for work, up to "60s" ("20s"). */
    wait?: string;
    /** How long each delivery is leased to this consumer, "1s" to "15m" ("60s"). */
    lease?: string;
    /** Abort to stop: the batch in hand is finished and answered first. */
    signal?: AbortSignal;
    /** Each delivery's outcome, or an error that consume() recovers from by itself (it retries). */
    onResult?: (event: OutboxEvent, result: ApplyResult) => void;
    onError?: (error: unknown) => void;
    /** The fetch to use (a proxy, a test); globalThis.fetch by default. */
    fetch?: typeof fetch;
}
/** A refusal from outboxd that no retry can fix (a wrong token, endpoint or option). */
export declare class ConsumeError extends Error {
    readonly status: number;
    constructor(status: number, message: string);
}
/**
 * Polls a pull endpoint, applies each event with applyOnce, and acks it (nacks it if `apply`
 * threw), until `signal` aborts. Events arrive in order per aggregate and at most one per
 * aggregate at a time; a duplicate (a lease that ran out after you applied) is recognised by the
 * store and acked without applying. Network errors and 5xx are retried with backoff; a 4xx
 * throws a ConsumeError. Trust comes from HTTPS and the token: pulled events are not signed.
 */
export declare function consume<Tx>(options: ConsumeOptions<Tx>): Promise<void>;
