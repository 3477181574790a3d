// One HTTP exchange of a webhook send: the POST as prepared by sender.ts (target checked, body
// built), signed here, and at most RESPONSE_PREFIX_BYTES of the answer read. Apart from sender.ts
// so that the send worker (send-worker-main.ts) loads this, the signer and `fetch` only: the same
// code in either thread, and a small worker. Signing here puts the HMAC on the send worker's
// thread, off the dispatcher's (issue 12, session 6: ~3% of its time draining a backlog).

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

/** One exchange, in whichever thread calls it: this one, or the send worker's (send-worker-main.ts). */
export async function makeExchange(exchange: Exchange): Promise<ExchangeResult> {
  try {
    const { sign, headers } = exchange;
    // The exchange is this send's own (made for it, or a copy from the dispatcher's thread).
    if (sign)
      headers["webhook-signature"] = signatureHeader(sign.secrets, sign.id, sign.timestamp, exchange.body);
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
    const e = error as { name?: string; message?: string; code?: string };
    return {
      statusCode: null,
      responsePrefix: null,
      retryAfter: null,
      failure: { name: e?.name, code: e?.code, message: e?.message ?? String(error) },
    };
  }
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
