// One webhook POST (DESIGN §4) with the runtime's `fetch`: Standard Webhooks headers, the signed
// body, a timeout, no redirects, and at most RESPONSE_PREFIX_BYTES of the answer read. Never
// throws: every way a send can end is an outcome.
//
// Unless private endpoints are allowed, the send connects to an address it checked itself
// (§1.7, §4 "against the address actually connected to"): `fetch` has no DNS hook, so the host
// is resolved here, every address checked, and the request sent to the first one by IP, with
// the original host in the Host header and as the TLS server name (SNI and certificate
// verification), and without environment proxies. No second lookup is left to rebind. Where
// the runtime's fetch cannot do that (Deno), a pinned request goes through node:http(s) with the
// checked address as its DNS answer (pinned-post.ts).
import ipaddr from "ipaddr.js";
import packageJson from "../../package.json" with { type: "json" };
import { type Resolver, sendTarget, sendTargetNow } from "../endpoints/url-guard.ts";
import { FETCH_PINS, pinnedPost } from "./pinned-post.ts";
import { signatureHeader } from "./signer.ts";

// From package.json at build time, so the compiled executable and Deno report it too.
export const USER_AGENT = `outboxd/${packageJson.version}`;

/** How much of a receiver's answer is read and kept with the attempt. */
export const RESPONSE_PREFIX_BYTES = 1024;

export interface WebhookMessage {
  id: string;
  type: string;
  aggregate: string;
  sequence: number;
  /** DESIGN §19: the queue's previous sequence, fixed at the delivery's creation; null for none. */
  previousSequence: number | null;
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

/**
 * The signed body; `data` is the stored JSON text, spliced in so its bytes are what was committed.
 * Written as a template (the same bytes as JSON.stringify of {id, type, timestamp, aggregate,
 * sequence} with `data` appended): no object built and stringified, nor its text cut, per send.
 */
export function webhookBody(message: WebhookMessage): string {
  return `{"id":${jsonString(message.id)},"type":${jsonString(message.type)},"timestamp":"${isoTime(message.occurredAt)}","aggregate":${jsonString(message.aggregate)},"sequence":${jsonNumber(message.sequence)},"previousSequence":${message.previousSequence === null ? "null" : jsonNumber(message.previousSequence)},"data":${message.payload}}`;
}

/** Text JSON.stringify writes as it is, between quotes: no quote, backslash, control or surrogate. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\ud7ff\ue000-\uffff]*$/;

/**
 * JSON.stringify(text), without its general machinery for the plain text ids, types and aggregates
 * nearly always are: four calls per send.
 */
function jsonString(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** JSON.stringify(n) for a number. */
function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : "null";
}

/** The last time written and its ISO text: a backlog's events come in runs committed in the same ms. */
let isoAt = Number.NaN;
let isoText = "";

function isoTime(at: number): string {
  if (at !== isoAt) {
    isoText = new Date(at).toISOString();
    isoAt = at;
  }
  return isoText;
}

/** A request pinned to one checked address. */
export interface PinnedRequest {
  /** What is fetched: the endpoint URL with its host replaced by the address. */
  url: string;
  /** The Host header: the endpoint URL's host, with its port when it is not the default. */
  host: string;
  /** The name TLS sends and verifies the certificate against (https to a host name only). */
  serverName: string | undefined;
}

/** The request for `url` that connects to `address` and still speaks to the URL's host. */
export function pinnedRequest(url: URL, address: string): PinnedRequest {
  let ip = ipaddr.parse(address);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  const pinned = new URL(url.href);
  pinned.hostname = ip.kind() === "ipv6" ? `[${ip.toString()}]` : ip.toString();
  const name = url.hostname.replace(/\.$/, "");
  const named = !ipaddr.isValid(url.hostname.replace(/^\[|\]$/g, ""));
  return {
    url: pinned.href,
    host: url.host,
    serverName: url.protocol === "https:" && named ? name : undefined,
  };
}

export async function sendWebhook(message: WebhookMessage, options: SendOptions): Promise<SendOutcome> {
  const started = performance.now();
  // Checked again at every send, against the answer that is then used to connect. One budget for
  // the lookup and the request: a resolver that hangs must not outlast the lease. Most sends need
  // no lookup (private endpoints allowed, an address): known at once, with no promise or timer.
  const known = sendTargetNow(options.url, options.allowPrivate);
  const target =
    known ??
    (await untilAborted(
      sendTarget(options.url, options.allowPrivate, options.resolver),
      AbortSignal.timeout(options.timeoutMs),
    ));
  if (target === null) return failed(started, `timeout: no answer within ${options.timeoutMs} ms`);
  if (target.blocked !== undefined) return failed(started, `blocked: the endpoint URL ${target.blocked}`);
  if (target.unresolved !== undefined) return failed(started, `dns: ${target.unresolved}`);
  const pinned = target.address === null ? null : pinnedRequest(target.url, target.address);

  const body = webhookBody(message);
  const timestamp = Math.floor(options.now / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": message.id,
    "webhook-timestamp": String(timestamp),
    "outbox-aggregate": headerText(message.aggregate),
    "outbox-sequence": String(message.sequence),
    "outbox-attempt": String(message.attempt),
  };
  if (message.traceparent) headers.traceparent = message.traceparent;
  if (pinned) headers.host = pinned.host;
  // The whole budget when nothing was awaited (no lookup), else what the lookup left of it.
  const timeoutMs =
    known !== null
      ? options.timeoutMs
      : Math.max(1, Math.ceil(options.timeoutMs - (performance.now() - started)));
  try {
    headers["webhook-signature"] = signatureHeader(options.secrets, message.id, timestamp, body);
    if (pinned && !FETCH_PINS) {
      // This runtime's fetch cannot pin (pinned-post.ts): node:http(s) with the checked address.
      const answer = await pinnedPost({
        url: target.url,
        address: target.address as string,
        headers,
        body,
        timeoutMs,
        prefixBytes: RESPONSE_PREFIX_BYTES,
      });
      return answered(answer.statusCode, answer.responsePrefix, answer.retryAfter, started);
    }
    const response = await fetch(pinned?.url ?? options.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      // Pinned: straight to the checked address (no environment proxy), TLS verified for the name.
      ...(pinned
        ? { proxy: false, ...(pinned.serverName ? { tls: { serverName: pinned.serverName } } : {}) }
        : {}),
    });
    const responsePrefix = await readPrefix(response);
    return answered(response.status, responsePrefix, response.headers.get("retry-after"), started);
  } catch (error) {
    const described = withoutQueries(describe(error, options.timeoutMs));
    return failed(started, pinned ? `${described} (address ${target.address})` : described);
  }
}

/**
 * At most RESPONSE_PREFIX_BYTES of the answer, decoded; the rest is never read (the stream is
 * cancelled). A body cut short still leaves its prefix.
 */
async function readPrefix(response: Response): Promise<string | null> {
  // An answer that says it is empty (most receivers' 200 or 204) has nothing to read.
  if (!response.body || response.headers.get("content-length") === "0") return null;
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

/** A send the receiver answered, `started` (performance.now()) ago; a 3xx is not followed. */
function answered(
  status: number,
  responsePrefix: string | null,
  retryAfter: string | null,
  started: number,
): SendOutcome {
  return {
    statusCode: status,
    error: status >= 300 && status < 400 ? "redirect not followed" : null,
    responsePrefix,
    retryAfter,
    durationMs: Math.round(performance.now() - started),
  };
}

/** A send that ended without an answer, `started` (performance.now()) ago. */
function failed(started: number, error: string): SendOutcome {
  return {
    statusCode: null,
    error,
    responsePrefix: null,
    retryAfter: null,
    durationMs: Math.round(performance.now() - started),
  };
}

/** Resolves with `promise`, or with null once `signal` aborts (the promise is left to settle). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const abort = () => resolve(null);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}

/**
 * Error text with the query strings of any URL it quotes dropped (Bun's TLS errors quote the
 * URL fetched): a token in a webhook URL's query must not reach attempts and logs.
 */
export function withoutQueries(text: string): string {
  return text.replace(/(https?:\/\/[^\s"'?#]*)[?#][^\s"']*/g, "$1");
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

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; message?: string; code?: string } | null;
  if (e?.name === "TimeoutError" || e?.name === "AbortError")
    return `timeout: no answer within ${timeoutMs} ms`;
  const code = e?.code ? `${e.code}: ` : "";
  return `${code}${e?.message ?? String(error)}`.slice(0, 500);
}
