// Pull endpoints (DESIGN §12) from the client: poll leases deliveries, ack and nack answer them
// with their lease tokens, stream reads the Server-Sent Events stream as deliveries. Plain fetch
// with the client's token; problems throw OutboxdError like every other call.
import type { Client } from "openapi-fetch";
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
  nack(
    endpoint: string,
    leases: Lease | readonly Lease[],
    options?: { retryAfter?: string },
  ): Promise<AckResult>;
  /**
   * GET /v1/endpoints/{id}/stream: each delivery as it is leased, until `signal` aborts or the
   * server ends the stream. Ack or nack each one; the stream leases more as they are answered.
   */
  stream(endpoint: string, options?: StreamOptions): AsyncGenerator<Pulled, void, undefined>;
}

export function pullClient(
  api: Client<paths>,
  options: {
    baseUrl: string;
    token: string;
    fetch?: ((request: Request) => Promise<Response>) | undefined;
    /** The client's one rule for a problem answer (secrets cut out of its text). */
    problem: (status: number, body: unknown) => OutboxdError;
  },
): PullClient {
  const id = (endpoint: string) => ({ params: { path: { id: endpoint } } });
  const answer = async <T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> => {
    const { data, error, response } = await call;
    if (!response.ok) throw options.problem(response.status, error);
    return data as T;
  };
  const list = (leases: Lease | readonly Lease[]) =>
    ([] as Lease[])
      .concat(leases as Lease[])
      .map(({ deliveryId, leaseToken }) => ({ deliveryId, leaseToken }));

  return {
    poll(endpoint, { signal, ...body } = {}) {
      return answer(
        api.POST("/v1/endpoints/{id}/poll", { ...id(endpoint), body, ...(signal ? { signal } : {}) }),
      ) as Promise<PollResult>;
    },
    ack(endpoint, leases) {
      return answer(
        api.POST("/v1/endpoints/{id}/ack", { ...id(endpoint), body: { acks: list(leases) } }),
      ) as Promise<AckResult>;
    },
    nack(endpoint, leases, { retryAfter } = {}) {
      const nacks = list(leases).map((lease) =>
        retryAfter === undefined ? lease : { ...lease, retryAfter },
      );
      return answer(
        api.POST("/v1/endpoints/{id}/ack", { ...id(endpoint), body: { nacks } }),
      ) as Promise<AckResult>;
    },
    async *stream(endpoint, { max, lease, signal } = {}) {
      const query = new URLSearchParams();
      if (max !== undefined) query.set("max", String(max));
      if (lease !== undefined) query.set("lease", lease);
      const url = `${options.baseUrl}/v1/endpoints/${encodeURIComponent(endpoint)}/stream${query.size ? `?${query}` : ""}`;
      const request = new Request(url, {
        headers: { authorization: `Bearer ${options.token}`, accept: "text/event-stream" },
        ...(signal ? { signal } : {}),
      });
      const response = await (options.fetch ?? fetch)(request);
      if (!response.ok || !response.body) {
        const text = await response.text().catch(() => "");
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: its text is the detail
        }
        throw options.problem(response.status, body);
      }
      yield* deliveries(response.body, signal);
    },
  };
}

const BLANK_LINE = /\r\n\r\n|\n\n|\r\r/;

/** The `delivery` events of a Server-Sent Events body (comments and other events skipped). */
async function* deliveries(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<Pulled> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      // An event ends at a blank line; a CRLF split across two chunks is only matched once whole.
      for (let end = BLANK_LINE.exec(buffer); end !== null; end = BLANK_LINE.exec(buffer)) {
        const block = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        let event = "message";
        const data: string[] = [];
        for (const line of block.split(/\r\n|\r|\n/)) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (event === "delivery" && data.length > 0) yield JSON.parse(data.join("\n")) as Pulled;
      }
    }
  } catch (error) {
    if (signal?.aborted) return;
    throw error;
  } finally {
    reader.releaseLock();
  }
}
