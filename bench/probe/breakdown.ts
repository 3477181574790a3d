// Where a delivery waits, commit → send → arrival, and the CPU outboxd spends per commit (issue
// 12): open-loop commits at a fixed rate to `outboxd serve` with one endpoint (as the latency
// scenario), then the stored attempt times beside the receiver's arrival times.
//   bun bench/probe/breakdown.ts [rate=1000] [seconds=3] [KEY=VALUE env for outboxd …]
// NO_ENDPOINT=1: commits only (the commit path's own CPU). PROF_DIR=dir: a `bun --cpu-prof-md`
// profile of the server. On a shared machine compare CPU per commit, A/B interleaved.
import { join } from "node:path";
import { Database } from "../../test/helpers/sqlite.ts";
import { BUN, cpuMs, percentile, startOutboxd, startPeer } from "../lib.ts";
import { fixedRate } from "../scenarios/latency.ts";

const rate = Number(process.argv[2] ?? 1000);
const seconds = Number(process.argv[3] ?? 3);
const env = Object.fromEntries(process.argv.slice(4).map((kv) => kv.split("=", 2) as [string, string]));

const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const outboxd = await startOutboxd(
  env,
  "serve",
  undefined,
  process.env.PROF_DIR ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.PROF_DIR}`] : [],
);
if (!process.env.NO_ENDPOINT) await outboxd.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
const cpu0 = cpuMs(outboxd.pid);
const since = Date.now();
const result = await fixedRate({ url: outboxd.url, receiverUrl: receiver.url, rate, seconds });
const cpu1 = cpuMs(outboxd.pid);
const arrivals = (await (await fetch(`${receiver.url}/arrivals?since=${since}`)).json()) as {
  id: string;
  at: number;
}[];
const arrived = new Map(arrivals.map((a) => [a.id, a.at]));
const db = new Database(join(outboxd.dir, "outboxd.db"), { readonly: true });
const rows = db
  .prepare(
    `SELECT d.event_id AS id, d.created_at AS c, a.started_at AS s, a.started_at + a.duration_ms AS a,
       d.delivered_at AS d FROM deliveries d JOIN attempts a ON a.delivery_id = d.id`,
  )
  .all() as { id: string; c: number; s: number; a: number; d: number | null }[];
db.close();
const parts: Record<string, number[]> = {
  "commit→send": [],
  "send→arrival": [],
  "send→answer": [],
  "commit→arrival": [],
};
for (const r of rows) {
  const at = arrived.get(r.id);
  parts["commit→send"]?.push(r.s - r.c);
  parts["send→answer"]?.push(r.a - r.s);
  if (at !== undefined) {
    parts["send→arrival"]?.push(at - r.s);
    parts["commit→arrival"]?.push(at - r.c);
  }
}
const fmt = (xs: number[]) =>
  `p50 ${percentile(xs, 50).toFixed(1)} p90 ${percentile(xs, 90).toFixed(1)} p99 ${percentile(xs, 99).toFixed(1)} max ${Math.max(...xs).toFixed(0)}`;
console.log(
  JSON.stringify({
    rate,
    seconds,
    env,
    ...result,
    cpuMsPerCommit: (cpu1 - cpu0) / Math.max(1, result.committed),
  }),
);
for (const [k, xs] of Object.entries(parts)) console.log(`${k.padEnd(16)} ${fmt(xs)}`);
await outboxd.stop();
await receiver.stop();
