// Limit: bare `fetch` POSTs to the receiver, with none of outboxd's claiming, signing or
// bookkeeping: how fast this machine can deliver webhooks at all.
//
//   RECEIVER_URL=http://127.0.0.1:N/ DURATION=10 npx bun bench/peers/bare-fetch.ts
//     → {"requestsPerSecond": n, …}
//
// INFLIGHT (64) loops each send one ~200-byte JSON body at a time, for DURATION (10) seconds,
// over Bun's keep-alive connections. A non-2xx answer or a network error counts in `failed`,
// not in the rate.
export {};

const RECEIVER_URL = process.env.RECEIVER_URL;
const DURATION = Number(process.env.DURATION ?? 10);
const INFLIGHT = Number(process.env.INFLIGHT ?? 64);
if (!RECEIVER_URL) throw new Error("RECEIVER_URL is required");
const url = RECEIVER_URL;

// Shaped like a peer's webhook body, padded to about 200 bytes.
function body(n: number): string {
  return JSON.stringify({
    id: crypto.randomUUID(),
    type: "record.committed",
    aggregate: `agg-${n % 1000}`,
    payload: { version: n, data: { n, note: "a bare fetch limit run, padded to ~200 bytes...." } },
  });
}

let ok = 0;
let failed = 0;
let sent = 0;
const started = performance.now();
const deadline = started + DURATION * 1000;

async function loop(): Promise<void> {
  while (performance.now() < deadline) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: body(sent++),
        signal: AbortSignal.timeout(15_000),
      });
      await response.arrayBuffer();
      if (response.ok) ok++;
      else failed++;
    } catch {
      failed++;
    }
  }
}

await Promise.all(Array.from({ length: INFLIGHT }, loop));
const seconds = (performance.now() - started) / 1000;
console.log(
  JSON.stringify({
    requestsPerSecond: Math.round(ok / seconds),
    requests: ok,
    failed,
    bodyBytes: body(0).length,
    seconds: Number(seconds.toFixed(2)),
  }),
);
