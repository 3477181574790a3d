// One webhook POST (DESIGN §4): Standard Webhooks headers, the signed body, a timeout, no
// redirects, and at most RESPONSE_PREFIX_BYTES of the answer read. Never throws: every way a
// send can end is an outcome.
import { endpointUrlProblem, type Resolver } from "../endpoints/url-guard.ts";
import { signatureHeader } from "./signer.ts";

export const RESPONSE_PREFIX_BYTES = 1024;
export const USER_AGENT = `outboxd/${process.env.npm_package_version ?? "0.1.0"}`;

export interface WebhookMessage {
  id: string;
  type: string;
  aggregate: string;
  sequence: number;
  /** JSON text of the event payload, embedded as `data` without re-serialising it. */
  payload: string;
  occurredAt: number;
  attempt: number;
  traceparent: string | null;
}

export interface SendOptions {
  url: string;
  secrets: readonly string[];
  timeoutMs: number;
  allowPrivate: boolean;
  resolver?: Resolver | undefined;
  now: number;
}

export interface SendOutcome {
  statusCode: number | null;
  error: string | null;
  responsePrefix: string | null;
  retryAfter: string | null;
  durationMs: number;
}

/** The signed body; `data` is the stored JSON text, spliced in so its bytes are what was committed. */
export function webhookBody(message: WebhookMessage): string {
  const head = JSON.stringify({
    id: message.id,
    type: message.type,
    timestamp: new Date(message.occurredAt).toISOString(),
    aggregate: message.aggregate,
    sequence: message.sequence,
  });
  return `${head.slice(0, -1)},"data":${message.payload}}`;
}

export async function sendWebhook(message: WebhookMessage, options: SendOptions): Promise<SendOutcome> {
  const started = performance.now();
  const done = (partial: Partial<SendOutcome>): SendOutcome => ({
    statusCode: null,
    error: null,
    responsePrefix: null,
    retryAfter: null,
    durationMs: Math.round(performance.now() - started),
    ...partial,
  });
  // Checked again at every send: DNS may have changed since the endpoint was created.
  const blocked = await endpointUrlProblem(options.url, options.allowPrivate, options.resolver);
  if (blocked) return done({ error: `blocked: the endpoint URL ${blocked}` });

  const body = webhookBody(message);
  const timestamp = Math.floor(options.now / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": message.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(options.secrets, message.id, timestamp, body),
    "outbox-aggregate": headerText(message.aggregate),
    "outbox-sequence": String(message.sequence),
    "outbox-attempt": String(message.attempt),
  };
  if (message.traceparent) headers.traceparent = message.traceparent;

  try {
    const response = await fetch(options.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const responsePrefix = await readPrefix(response);
    return done({
      statusCode: response.status,
      responsePrefix,
      retryAfter: response.headers.get("retry-after"),
      error: response.status >= 300 && response.status < 400 ? "redirect not followed" : null,
    });
  } catch (error) {
    return done({ error: describe(error, options.timeoutMs) });
  }
}

/**
 * A header value that is the text itself when it is printable ASCII (so `returns/r-123` arrives as
 * `returns/r-123`), with other bytes and `%` percent-encoded as UTF-8 (`decodeURIComponent` undoes
 * it). Unlike encodeURIComponent it never throws, even on a lone surrogate.
 */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x24\x26-\x7e]+/g, (run) =>
    [...Buffer.from(run, "utf8")]
      .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`)
      .join(""),
  );
}

async function readPrefix(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_PREFIX_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short still leaves its prefix.
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_PREFIX_BYTES);
  return bytes.length === 0 ? null : new TextDecoder().decode(bytes);
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; message?: string; code?: string };
  if (e?.name === "TimeoutError" || e?.name === "AbortError")
    return `timeout: no answer within ${timeoutMs} ms`;
  const code = e?.code ? `${e.code}: ` : "";
  return `${code}${e?.message ?? String(error)}`.slice(0, 500);
}
