// One HTTP exchange of a webhook send: the POST as prepared by sender.ts (target checked, body
// built), signed here, and at most RESPONSE_PREFIX_BYTES of the answer read. Apart from sender.ts
// so that the send worker (send-worker-main.ts) loads this, the signer and the HTTP client only:
// the same code in either thread, and a small worker. Signing here puts the HMAC on the send
// worker's thread, off the dispatcher's (issue 12, session 6: ~3% of its time draining a backlog).
//
// The request is made by one of two clients (OUTBOXD_WEBHOOK_CLIENT): `native`, HTTP/1.1 over
// Bun's sockets (http1-client.ts: about a third of `fetch`'s CPU per request, issue 12 session
// 10), the default on the dispatcher's own thread on Bun; `fetch`, the portable one, the only one
// on Deno, and the default on the send worker (workerClient). Both give the same
// answers and failures (test/dispatch/http1-client.test.ts runs them side by side).

import { Http1Client } from "./http1-client.ts";
import { signatureHeader } from "./signer.ts";

export const RESPONSE_PREFIX_BYTES = 1024;

/**
 * One HTTP exchange, prepared on the dispatcher's thread (target checked, body built): what
 * `fetch` is asked, and how long it may still take. Plain data, so a send worker (send-worker.ts)
 * can make it on the second core.
 */
export interface Exchange {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** What the `webhook-signature` header signs (signer.ts), when the headers do not carry it yet. */
  sign?: { secrets: readonly string[]; id: string; timestamp: number } | undefined;
  /** What is left of the send's budget after the lookup. */
  timeoutMs: number;
  /** Pinned to a checked address: no environment proxy, and this TLS server name (if any). */
  pinned: boolean;
  serverName: string | undefined;
}

/** What came back: the answer, or what `fetch` threw (its name, code and message). */
export interface ExchangeResult {
  statusCode: number | null;
  responsePrefix: string | null;
  retryAfter: string | null;
  failure: { name?: string | undefined; code?: string | undefined; message: string } | null;
}

/** Makes an exchange: in this thread (makeExchange) or on a send worker (send-worker.ts). */
export type Exchanger = (exchange: Exchange) => Promise<ExchangeResult>;

/** How webhook requests are made (OUTBOXD_WEBHOOK_CLIENT). */
export type WebhookClient = "auto" | "native" | "fetch";

let chosen: WebhookClient = "auto";
let native: Http1Client | null = null;

/**
 * Environment proxies are honoured by `fetch` only: with one set, requests that are not pinned to
 * a checked address (private endpoints allowed) keep going through `fetch`, and so the proxy.
 */
const PROXIED =
  typeof process === "object" &&
  ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"].some((name) => !!process.env[name]);

/**
 * Chooses the client of this thread's exchanges (app.ts from the config; the send worker from its
 * first message). `auto` is `native` here and `fetch` on the send worker (workerClient).
 */
export function useWebhookClient(client: WebhookClient): void {
  chosen = client;
}

/**
 * The client the send worker (`serve`) uses: `auto` gives it `fetch`. With the native client the
 * worker's one thread serves its sockets and its JS, and the commit -> arrival p99 at 2,000 and
 * 4,000 commits/s came out higher in 9 of 10 runs on a loaded machine (docs/benchmarks.md, issue 12
 * session 10); `fetch` serves them on a thread of its own. The dispatcher's own thread (`outboxd
 * dispatch`, the backlog) keeps the native client: 16% less CPU per delivery in all.
 */
export function workerClient(): WebhookClient {
  return chosen === "auto" ? "fetch" : chosen;
}

/** The native client where it runs (Bun) and is chosen; null: `fetch`. */
function nativeClient(exchange: Exchange): Http1Client | null {
  if (chosen === "fetch" || (PROXIED && !exchange.pinned)) return null;
  if (native === null) {
    if (typeof (globalThis as { Bun?: { connect?: unknown } }).Bun?.connect !== "function") return null;
    native = new Http1Client({ prefixBytes: RESPONSE_PREFIX_BYTES });
  }
  return native;
}

/** Closes the native client's idle connections (those in use close at the end of their exchange). */
export function closeIdleConnections(): void {
  native?.closeIdle();
}

/** One exchange, in whichever thread calls it: this one, or the send worker's (send-worker-main.ts). */
export function makeExchange(exchange: Exchange): Promise<ExchangeResult> {
  const { sign, headers } = exchange;
  try {
    // The exchange is this send's own (made for it, or a copy from the dispatcher's thread).
    if (sign)
      headers["webhook-signature"] = signatureHeader(sign.secrets, sign.id, sign.timestamp, exchange.body);
  } catch (error) {
    return Promise.resolve(failure(error));
  }
  const client = nativeClient(exchange);
  return client === null ? fetchExchange(exchange) : client.post(exchange);
}

/** The exchange made with `fetch`. */
async function fetchExchange(exchange: Exchange): Promise<ExchangeResult> {
  try {
    const { headers } = exchange;
    const response = await fetch(exchange.url, {
      method: "POST",
      headers,
      body: exchange.body,
      redirect: "manual",
      signal: AbortSignal.timeout(exchange.timeoutMs),
      ...(exchange.pinned
        ? { proxy: false, ...(exchange.serverName ? { tls: { serverName: exchange.serverName } } : {}) }
        : {}),
    });
    return {
      statusCode: response.status,
      responsePrefix: await readPrefix(response),
      retryAfter: response.headers.get("retry-after"),
      failure: null,
    };
  } catch (error) {
    return failure(error);
  }
}

function failure(error: unknown): ExchangeResult {
  const e = error as { name?: string; message?: string; code?: string };
  return {
    statusCode: null,
    responsePrefix: null,
    retryAfter: null,
    failure: { name: e?.name, code: e?.code, message: e?.message ?? String(error) },
  };
}

async function readPrefix(response: Response): Promise<string | null> {
  // An answer that says it is empty (most receivers' 200 or 204) has nothing to read: no stream
  // reader is made for it (~2 µs of the sending thread per exchange, issue 12 session 9).
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
