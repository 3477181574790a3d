// Commits alone, in process: outboxd's HTTP app without sockets (`app.request`), CONNECTIONS
// (64) concurrent loops of one-record-one-event commits for DURATION (5) seconds, no endpoint,
// no dispatcher, synchronous=FULL. Prints {"commitsPerSecond", "commits", "errors"}. With WARMUP
// (seconds, 0), the loops first run that long uncounted: the JIT's first tens of thousands of
// commits are then not in the figure (bench/scenarios/commit-limit.ts warms its limit alike).
//
//   DURATION=5 WARMUP=1 npx bun bench/load/in-process-commits.ts
import { inProcessOutboxd, TOKEN } from "../lib.ts";

const seconds = Number(process.env.DURATION ?? 5);
const warmup = Number(process.env.WARMUP ?? 0);
const connections = Number(process.env.CONNECTIONS ?? 64);
const { outboxd, stop } = await inProcessOutboxd({
  token: TOKEN,
  env: { OUTBOXD_LOG_LEVEL: "warn", OUTBOXD_SYNCHRONOUS: "FULL" },
});
let n = 0;
let ok = 0;
let errors = 0;
const counted = performance.now() + warmup * 1000;
const end = counted + seconds * 1000;
const loop = async () => {
  while (performance.now() < end) {
    const id = `o-${n++}`;
    const body = JSON.stringify({
      records: [{ collection: "orders", id, data: { status: "paid", total: 1250 } }],
      events: [{ type: "order.paid", payload: { orderId: id, total: 1250 } }],
    });
    const response = await outboxd.http.request("/v1/commits", {
      method: "POST",
      // With its Content-Length, as every HTTP client sends it (a Request made in process has none).
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      },
      body,
    });
    await response.arrayBuffer();
    if (response.status !== 201) errors++;
    else if (performance.now() >= counted) ok++;
  }
};
await Promise.all(Array.from({ length: connections }, loop));
const elapsed = (performance.now() - counted) / 1000;
await stop();
console.log(JSON.stringify({ commitsPerSecond: Math.round(ok / elapsed), commits: ok, errors }));
