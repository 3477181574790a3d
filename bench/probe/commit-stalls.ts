// Event-loop stalls under commits alone, in process: 64 commits in flight (one record, one event
// each), FULL, no endpoint, for N commits (40,000: two or more WAL checkpoints' worth), with a
// 1 ms timer whose gaps show every stretch the event loop could not run anything else. Before
// checkpoints moved to a worker (src/db/checkpointer.ts), each checkpoint was one such stretch of
// 30-65 ms inside a COMMIT. Compare two checkouts one after the other on a quiet machine:
//   bun bench/probe/commit-stalls.ts [commits=40000]
//   ROOT=/path/to/other/checkout bun bench/probe/commit-stalls.ts
import { join } from "node:path";
import { inProcessOutboxd } from "../lib.ts";

const root = process.env.ROOT ?? join(import.meta.dir, "../..");
const total = Number(process.argv[2] ?? 40_000);
const { COMMIT_BODY } = await import(join(root, "bench/scenarios/commit.ts"));
const TOKEN = "bench-commit-stalls-token";
const { outboxd, stop } = await inProcessOutboxd({
  token: TOKEN,
  root,
  env: { OUTBOXD_SYNCHRONOUS: "FULL" },
});
const gaps: number[] = [];
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  gaps.push(now - last);
  last = now;
}, 1);
let next = 0;
const started = performance.now();
try {
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < total) {
        const response = await outboxd.http.fetch(
          new Request("http://outboxd/v1/commits", {
            method: "POST",
            headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
            body: COMMIT_BODY.replaceAll("[<id>]", String(next++)),
          }),
        );
        if (response.status !== 201) throw new Error(`commit answered ${response.status}`);
        await response.arrayBuffer();
      }
    }),
  );
} finally {
  clearInterval(timer);
  await stop();
}
const seconds = (performance.now() - started) / 1000;
gaps.sort((a, b) => b - a);
console.log(
  JSON.stringify({
    root,
    commitsPerSecond: Math.round(total / seconds),
    gapsOver20ms: gaps.filter((g) => g > 20).length,
    longestGapsMs: gaps.slice(0, 5).map((g) => Math.round(g)),
  }),
);
