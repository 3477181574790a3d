import { type Client } from "./vendor/openapi-fetch.js";
import { type PullClient } from "./pull.js";
import { type RetryOptions } from "./retry.js";
import type { components, operations, paths } from "./schema.gen.js";
export { type FieldError, OutboxdError } from "./errors.js";
export type { AckResult, Lease, PollOptions, PollResult, PullClient, Pulled, PulledEvent, StreamOptions, } from "./pull.js";
export type { RetryOptions } from "./retry.js";
export type { components, operations, paths };
export interface ClientOptions {
    /** Where outboxd listens, e.g. `https://outboxd.internal:8080`. */
    baseUrl: string;
    /** A bearer token (`otk_…`, or the admin token). */
    token: string;
    /** How commits are retried (default: 5 tries, backoff from 200 ms, waits capped at 30 s). */
    retry?: RetryOptions;
    /** Another fetch (tests, proxies, instrumentation). */
    fetch?: (request: Request) => Promise<Response>;
}
/** The JSON body of a response object, or `unknown` while the document does not describe it. */
type JsonOf<R> = R extends {
    content: {
        "application/json": infer T;
    };
} ? T : unknown;
/** The generated type where /openapi.json describes it, the contract's shape where it does not. */
type Described<T, Fallback> = unknown extends T ? Fallback : T;
export type CommitBody = components["schemas"]["CommitRequest"];
/** DESIGN §3's commit answer, as /openapi.json describes it. */
export type CommitResult = JsonOf<operations["postCommits"]["responses"][201]>;
export interface CommitOptions {
    /** Defaults to a fresh UUID per call; give your own to make retries across processes safe. */
    idempotencyKey?: string;
    /** A W3C traceparent: outboxd continues that trace and sends it on with the webhooks. */
    traceparent?: string;
    signal?: AbortSignal;
}
/** The GET routes that answer a page (`{data, next}`) and take `after`. */
export type ListPath = {
    [P in keyof paths]: paths[P] extends {
        get: {
            parameters: {
                query?: {
                    after?: string;
                };
            };
        };
    } ? P : never;
}[keyof paths];
type ListOperation<P extends ListPath> = paths[P] extends {
    get: infer O;
} ? O : never;
type ListParams<P extends ListPath> = ListOperation<P> extends {
    parameters: infer Q;
} ? Q : never;
/** One item of a list route's `data`. */
export type ListItem<P extends ListPath> = Described<ListOperation<P> extends {
    responses: {
        200: infer R;
    };
} ? JsonOf<R> extends {
    data: (infer I)[];
} ? I : unknown : unknown, Record<string, unknown>>;
export interface OutboxdClient extends PullClient {
    /** The typed openapi-fetch client (bearer token set) for every route this class does not wrap. */
    readonly api: Client<paths>;
    /**
     * POST /v1/commits. Sends an Idempotency-Key (its own unless given) and retries network
     * errors, 429, 503 and 409 idempotency-in-progress with that same key, honouring Retry-After,
     * so a retry can never commit twice. Any other problem throws OutboxdError at once.
     */
    commit(body: CommitBody, options?: CommitOptions): Promise<CommitResult>;
    /** Every item of a list route, page after page (`next` → `after`), as they are fetched. */
    list<P extends ListPath>(path: P, params?: ListParams<P>): AsyncGenerator<ListItem<P>, void, undefined>;
    /** All items of a list route, in one array (mind the size of what you ask for). */
    listAll<P extends ListPath>(path: P, params?: ListParams<P>): Promise<ListItem<P>[]>;
}
export declare function createClient(options: ClientOptions): OutboxdClient;
