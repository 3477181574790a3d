import type { Client } from "./vendor/openapi-fetch.js";
import type { OutboxdError } from "./errors.js";
import type { operations, paths } from "./schema.gen.js";
type PollOperation = operations["postEndpointsIdPoll"];
type AckOperation = operations["postEndpointsIdAck"];
/** What poll takes: `max` deliveries (1–500, 100), `wait` for work up to "60s", `lease` "1s"–"15m" (60s). */
export type PollOptions = NonNullable<PollOperation["requestBody"]>["content"]["application/json"] & {
    signal?: AbortSignal;
};
/** poll's answer: the leased deliveries and when their lease ends (null when there are none). */
export type PollResult = PollOperation["responses"][200]["content"]["application/json"];
/** One leased delivery: answer it with ack or nack, by its deliveryId and leaseToken. */
export type Pulled = PollResult["data"][number];
/** The event a delivery carries (the webhook body of DESIGN §4). */
export type PulledEvent = Pulled["event"];
/** ack's answer: how many were acked and nacked, and the ids whose lease was lost (`stale`). */
export type AckResult = AckOperation["responses"][200]["content"]["application/json"];
/** A delivery to answer: what poll or stream handed out (any object with these two fields). */
export interface Lease {
    deliveryId: string;
    leaseToken: string;
}
export interface StreamOptions {
    /** At most this many sent and unanswered at once (1–500, 100). */
    max?: number;
    /** Each delivery's lease, "1s"–"15m" (60s); not renewed. */
    lease?: string;
    /** Abort to end the stream. */
    signal?: AbortSignal;
}
export interface PullClient {
    /** POST /v1/endpoints/{id}/poll: leases up to `max` deliveries, waiting up to `wait` for one. */
    poll(endpoint: string, options?: PollOptions): Promise<PollResult>;
    /** POST /v1/endpoints/{id}/ack: delivered. A lost lease comes back in `stale`. */
    ack(endpoint: string, leases: Lease | readonly Lease[]): Promise<AckResult>;
    /** POST /v1/endpoints/{id}/ack with nacks: a failed attempt, due again after `retryAfter` (else the backoff). */
    nack(endpoint: string, leases: Lease | readonly Lease[], options?: {
        retryAfter?: string;
    }): Promise<AckResult>;
    /**
     * GET /v1/endpoints/{id}/stream: each delivery as it is leased, until `signal` aborts or the
     * server ends the stream. Ack or nack each one; the stream leases more as they are answered.
     */
    stream(endpoint: string, options?: StreamOptions): AsyncGenerator<Pulled, void, undefined>;
}
export declare function pullClient(api: Client<paths>, options: {
    baseUrl: string;
    token: string;
    fetch?: ((request: Request) => Promise<Response>) | undefined;
    /** The client's one rule for a problem answer (secrets cut out of its text). */
    problem: (status: number, body: unknown) => OutboxdError;
}): PullClient;
export {};
