// A webhook POST pinned to a checked address where the runtime's `fetch` cannot pin one (Deno):
// its `fetch` drops a Host header and verifies TLS against the URL's host, so a request to the
// address would reach a virtual host by its address and fail every certificate issued for a name.
// node:http(s) can: the request names the endpoint's host (Host header, TLS server name and
// certificate check), and its `lookup` answers with the address sender.ts checked, so no second
// DNS lookup is left to rebind. Each request has a connection of its own (no agent), closed after
// it: Deno's node:http kept a pooled connection open after a timed-out request, and with it the
// process. Under Bun, `fetch` pins itself (sender.ts).
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";

export interface PinnedPost {
  /** The endpoint URL as it is (its host is what the receiver and its certificate see). */
  url: URL;
  /** The checked address to connect to. */
  address: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** How much of the answer to read; the rest is not read. */
  prefixBytes: number;
}

export interface PinnedAnswer {
  statusCode: number;
  retryAfter: string | null;
  /** At most prefixBytes of the body, decoded; null when empty. */
  responsePrefix: string | null;
}

/** Whether the runtime's `fetch` can be pinned to an address (Bun: Host header and tls.serverName kept). */
export const FETCH_PINS = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

/** POSTs to `url` over a connection to `address`; rejects as `fetch` does (a TimeoutError when time runs out). */
export function pinnedPost(post: PinnedPost): Promise<PinnedAnswer> {
  const family = post.address.includes(":") ? 6 : 4;
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [{ address: post.address, family }]);
    else callback(null, post.address, family);
  };
  const { host: _host, ...headers } = post.headers;
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const request = (post.url.protocol === "https:" ? https : http).request(
      post.url,
      { method: "POST", headers, lookup, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () =>
          settle(() => {
            const bytes = Buffer.concat(chunks).subarray(0, post.prefixBytes);
            const retryAfter = response.headers["retry-after"];
            resolve({
              statusCode: response.statusCode ?? 0,
              retryAfter: typeof retryAfter === "string" ? retryAfter : null,
              responsePrefix: bytes.length === 0 ? null : new TextDecoder().decode(bytes),
            });
            // The rest of the answer is not read.
            if (!response.complete) response.destroy();
          });
        response.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= post.prefixBytes) finish();
        });
        // A body cut short still leaves its prefix.
        response.on("end", finish);
        response.on("error", finish);
        response.on("close", finish);
      },
    );
    // Its own timer, not an AbortSignal: the whole exchange, answer included, within timeoutMs.
    const timer = setTimeout(() => {
      const timeout = Object.assign(new Error(`no answer within ${post.timeoutMs} ms`), {
        name: "TimeoutError",
      });
      settle(() => reject(timeout));
      request.destroy(timeout);
      request.socket?.destroy();
    }, post.timeoutMs);
    request.on("error", (error) => settle(() => reject(error)));
    request.end(post.body);
  });
}
