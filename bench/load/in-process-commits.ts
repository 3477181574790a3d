// Commits alone, in process: outboxd's HTTP app without sockets (`app.request`), CONNECTIONS
// (64) concurrent loops of one-record-one-event commits for DURATION (5) seconds, no endpoint,
// no dispatcher, synchronous=FULL. Prints {"commitsPerSecond", "commits", "errors"}.
//
//   DURATION=5 npx bun bench/load/in-process-commits.ts
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createOutboxd } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { TOKEN, tempDir } from "../lib.ts";

const seconds = Number(process.env.DURATION ?? 5);
const connections = Number(process.env.CONNECTIONS ?? 64);
const dir = tempDir("outboxd-bench-inprocess-");
const outboxd = await createOutboxd(
  loadConfig({
    OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
    OUTBOXD_ADMIN_TOKEN: TOKEN,
    OUTBOXD_LOG_LEVEL: "warn",
    OUTBOXD_RATE_LIMIT: "0",
    OUTBOXD_SYNCHRONOUS: "FULL",
  }),
  { dispatch: false },
);
let n = 0;
let ok = 0;
let errors = 0;
const end = performance.now() + seconds * 1000;
const loop = async () => {
  while (performance.now() < end) {
    const id = `o-${n++}`;
    const response = await outboxd.http.request("/v1/commits", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        records: [{ collection: "orders", id, data: { status: "paid", total: 1250 } }],
        events: [{ type: "order.paid", payload: { orderId: id, total: 1250 } }],
      }),
    });
    await response.arrayBuffer();
    if (response.status === 201) ok++;
    else errors++;
  }
};
const started = performance.now();
await Promise.all(Array.from({ length: connections }, loop));
const elapsed = (performance.now() - started) / 1000;
await outboxd.stop();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ commitsPerSecond: Math.round(ok / elapsed), commits: ok, errors }));
