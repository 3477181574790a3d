// Pull endpoints' consumer routes (DESIGN §12): poll (long poll), ack/nack, and the SSE stream.
// The work is src/pull's; here are the request rules and the wire shapes.

import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { storedTokenId } from "../../auth/authenticator.ts";
import { parseDuration } from "../../lib/duration.ts";
import type { Pulled } from "../../pull/service.ts";
import { hasBody, readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { AckAnswer, PollAnswer } from "../responses.ts";
import { AckSchema, PollSchema, StreamQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { DELIVERY_ID, EVENT_ID, T } from "./examples.ts";

const DEFAULT_MAX = 100;
const DEFAULT_LEASE_MS = 60_000;
/** A `: keepalive` comment after this long without a write, so proxies keep the stream open. */
export const STREAM_KEEPALIVE_MS = 15_000;

const LEASE_TOKEN = "lt_9f2c4e1a7b3d5f60a1b2c3d4e5f60718";
const PULLED_EXAMPLE = {
  deliveryId: DELIVERY_ID,
  leaseToken: LEASE_TOKEN,
  attempt: 1,
  event: {
    id: EVENT_ID,
    type: "return.approved",
    timestamp: T,
    aggregate: "returns/r-123",
    sequence: 7,
    previousSequence: 6,
    data: { returnId: "r-123" },
  },
};

/**
 * Bun closes a connection after 10 s without traffic (its idleTimeout); a long poll or a stream
 * tells it how long this one may be quiet. Elsewhere (Deno, app.request in tests) a no-op.
 */
function allowQuiet(c: Context<AppEnv>, seconds: number): void {
  const server = c.env as { timeout?: (request: Request, seconds: number) => void } | undefined;
  if (typeof server?.timeout === "function") server.timeout(c.req.raw, seconds);
}

/**
 * One SSE message per delivery. The payload is spliced in as committed, so it may hold line breaks
 * (as JSON whitespace): each line becomes a `data:` line, which the client joins back with "\n".
 */
function sseMessage(p: Pulled): string {
  return `event: delivery\nid: ${p.deliveryId}\ndata: ${p.json.replace(/\r\n|\r|\n/g, "\ndata: ")}\n\n`;
}

const ms = (duration: string | null | undefined, fallback: number) =>
  duration == null ? fallback : (parseDuration(duration) as number);

export function pullRoutes(app: App, deps: HttpDeps): void {
  const { pull } = deps;
  const tag = "Pull";

  app.post(
    "/v1/endpoints/:id/poll",
    scopedRoute(deps, {
      scopes: "consume",
      tag,
      summary: "Lease deliveries of a pull endpoint (long poll)",
      description:
        "Leases up to `max` (1-500, default 100) deliveries, at most one per aggregate, in sequence order " +
        "(the head-of-line rule of webhooks), each for `lease` (1s-15m, default 60s) under its own " +
        "`leaseToken`. With `wait` (up to 60s, default 0) an empty answer is held until work arrives or the " +
        "wait ends. Answer each with `/ack`; a lease that runs out is a failed attempt and the delivery comes " +
        "again after the backoff. 409 for a webhook endpoint or a disabled one. The body is optional.",
      body: { schema: PollSchema, required: false, example: { max: 100, wait: "20s", lease: "60s" } },
      answers: {
        200: {
          description: "The leased deliveries (possibly none).",
          schema: PollAnswer,
          example: { data: [PULLED_EXAMPLE], leaseExpiresAt: T },
        },
      },
      problems: [400, 404, 409, 413, 422],
    }),
    async (c) => {
      const id = c.req.param("id");
      const body = hasBody(c) ? validate(PollSchema, await readJson(c, deps.config.maxBodyBytes)) : {};
      // The endpoint (404, 409) is checked by each lease, inside its write.
      const waitMs = ms(body.wait, 0);
      if (waitMs > 0) allowQuiet(c, Math.ceil(waitMs / 1000) + 10);
      const batch = await pull.poll({
        endpointId: id,
        max: body.max ?? DEFAULT_MAX,
        waitMs,
        leaseMs: ms(body.lease, DEFAULT_LEASE_MS),
        holder: storedTokenId(c.get("identity")),
        signal: c.req.raw.signal,
      });
      const expires =
        batch.leaseExpiresAt === null ? "null" : `"${new Date(batch.leaseExpiresAt).toISOString()}"`;
      return c.body(
        `{"data":[${batch.data.map((p) => p.json).join(",")}],"leaseExpiresAt":${expires}}`,
        200,
        {
          "content-type": "application/json",
        },
      );
    },
  );

  app.post(
    "/v1/endpoints/:id/ack",
    scopedRoute(deps, {
      scopes: "consume",
      tag,
      summary: "Acknowledge or refuse leased deliveries",
      description:
        "An ack marks the delivery delivered; a nack is a failed attempt, tried again after `retryAfter` " +
        "(up to 24h) or the backoff, and dead past its deadline. Each names the `leaseToken` it was leased " +
        "with: a lost lease, an unknown id or another endpoint's delivery is listed in `stale` and changes " +
        "nothing. An ack repeated under the token that acked it counts as acked. At most 500 of each.",
      body: {
        schema: AckSchema,
        example: {
          acks: [{ deliveryId: DELIVERY_ID, leaseToken: LEASE_TOKEN }],
          nacks: [{ deliveryId: "dlv_01JDZ8V7M2Q5", leaseToken: LEASE_TOKEN, retryAfter: "30s" }],
        },
      },
      answers: {
        200: {
          description: "What was acknowledged, refused, and found stale.",
          schema: AckAnswer,
          example: { acked: 1, nacked: 1, stale: [] },
        },
      },
      problems: [400, 404, 409, 413, 422],
    }),
    async (c) => {
      const id = c.req.param("id");
      const body = validate(AckSchema, await readJson(c, deps.config.maxBodyBytes));
      // The endpoint (404, 409) is checked inside the ack's write.
      const result = await pull.ack(
        id,
        body.acks ?? [],
        (body.nacks ?? []).map(({ deliveryId, leaseToken, retryAfter }) => ({
          deliveryId,
          leaseToken,
          retryAfterMs: retryAfter == null ? null : (parseDuration(retryAfter) as number),
        })),
      );
      return c.json({ acked: result.acked, nacked: result.nacked, stale: result.stale });
    },
  );

  app.get(
    "/v1/endpoints/:id/stream",
    scopedRoute(deps, {
      scopes: "consume",
      tag,
      summary: "Stream deliveries of a pull endpoint (Server-Sent Events)",
      description:
        "Each leased delivery is one message `event: delivery`, `id: <deliveryId>`, `data:` " +
        '`{"deliveryId", "leaseToken", "attempt", "event"}`. At most `max` (1-500, default 100) are ' +
        "unacknowledged at once; answer them with `/ack`. Each lease (`lease`, 1s-15m, default 60s) is not " +
        "renewed: an unacknowledged delivery is a failed attempt when it runs out and comes again. " +
        "`Last-Event-ID` is ignored. A `: keepalive` comment every 15 s. Send the token in the " +
        "`Authorization` header (browsers: a fetch-based SSE reader; `EventSource` cannot).",
      query: StreamQuerySchema,
      answers: {
        200: {
          description: "The event stream (`text/event-stream`), open until the client closes it.",
          contentType: "text/event-stream",
          example: `event: delivery\nid: ${DELIVERY_ID}\ndata: ${JSON.stringify(PULLED_EXAMPLE)}\n\n`,
        },
      },
      problems: [404, 409, 422],
    }),
    async (c) => {
      const id = c.req.param("id");
      const query = validate(StreamQuerySchema, c.req.query());
      await pull.checkEndpoint(id, "lease");
      const options = {
        max: query.max ?? DEFAULT_MAX,
        leaseMs: ms(query.lease, DEFAULT_LEASE_MS),
        keepaliveMs: STREAM_KEEPALIVE_MS,
        holder: storedTokenId(c.get("identity")),
      };
      // Proxies such as nginx would otherwise hold the messages back.
      c.header("x-accel-buffering", "no");
      // Quiet for at most the keepalive interval, then some.
      allowQuiet(c, STREAM_KEEPALIVE_MS / 1000 + 15);
      return streamSSE(c, async (stream) => {
        // At once, so the status and headers go out before the first delivery.
        await stream.write(": connected\n\n");
        const closed = new AbortController();
        stream.onAbort(() => closed.abort());
        c.req.raw.signal.addEventListener("abort", () => closed.abort(), { once: true });
        await pull.stream(id, options, {
          signal: closed.signal,
          deliver: async (batch) => {
            await stream.write(batch.map(sseMessage).join(""));
          },
          keepalive: async () => {
            await stream.write(": keepalive\n\n");
          },
        });
      });
    },
  );
}
