// Commits over HTTP, closed loop (autocannon, 64 connections), no endpoint: rate and outboxd's
// CPU per commit, for A/B runs on a shared machine.
//   bun bench/probe/commits.ts [seconds=4] [KEY=VALUE env for outboxd …]
import { cpuMs, load, startOutboxd, TOKEN } from "../lib.ts";

const seconds = Number(process.argv[2] ?? 4);
const env = Object.fromEntries(process.argv.slice(3).map((kv) => kv.split("=", 2) as [string, string]));
const outboxd = await startOutboxd(env);
const body = JSON.stringify({
  records: [{ collection: "orders", id: "o-[<id>]", data: { status: "paid", total: 1250 } }],
  events: [{ type: "order.paid", payload: { total: 1250 } }],
});
const cpu0 = cpuMs(outboxd.pid);
const result = await load({
  url: `${outboxd.url}/v1/commits`,
  connections: 64,
  seconds,
  body,
  headers: { authorization: `Bearer ${TOKEN}` },
});
const cpu1 = cpuMs(outboxd.pid);
const commits = result.requestsPerSecond * seconds;
console.log(
  JSON.stringify({
    env,
    perSecond: result.requestsPerSecond,
    p99Ms: result.latencyP99Ms,
    cpuMsPerCommit: +((cpu1 - cpu0) / Math.max(1, commits)).toFixed(3),
  }),
);
await outboxd.stop();
