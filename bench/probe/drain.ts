// CPU per delivery of a standalone dispatcher (`outboxd dispatch`) draining a backlog over 1,000
// aggregates to the bench receiver (issue 12): the dispatcher's own cost, steadier than its rate
// on a shared machine. PROF_DIR=dir: a `bun --cpu-prof-md` profile of the dispatcher. Also prints
// the CPU per delivery of each of its threads (`main` is the dispatcher's own; the send worker,
// Bun's HTTP client, JIT and GC threads are apart): the figure issue 12's A/Bs compare.
// SQL_TIMES=1: also the main thread's time per delivery in each SQL statement (sql-times-preload.ts).
//   bun bench/probe/drain.ts [total=10000] [KEY=VALUE env for the dispatcher …]
import { join } from "node:path";
import { newSecret } from "../../test/helpers/snippet-receiver.ts";
import { BUN, cpuMs, REPO, startOutboxd, startPeer, tempDir, threadCpuMs, waitUntil } from "../lib.ts";
import { prefill } from "../scenarios/delivery.ts";

const total = Number(process.argv[2] ?? 10000);
const env = Object.fromEntries(process.argv.slice(3).map((kv) => kv.split("=", 2) as [string, string]));
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const dir = tempDir("outboxd-probe-drain-");
await prefill(dir, { url: `${receiver.url}/hook`, secret: newSecret() }, total, 1000);
const count = async () => ((await (await fetch(`${receiver.url}/count`)).json()) as { count: number }).count;
const sqlTimes = process.env.SQL_TIMES ? join(tempDir("outboxd-probe-sql-"), "times.json") : null;
const dispatcher = await startOutboxd(sqlTimes ? { ...env, SQL_TIMES: sqlTimes } : env, "dispatch", dir, [
  ...(process.env.PROF_DIR ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.PROF_DIR}`] : []),
  ...(sqlTimes ? ["--preload", join(REPO, "bench/probe/sql-times-preload.ts")] : []),
]);
const started = performance.now();
await waitUntil("the backlog to drain", async () => (await count()) >= total, 600_000);
const seconds = (performance.now() - started) / 1000;
const cpu = cpuMs(dispatcher.pid);
const threads: Record<string, number> = {};
for (const [name, ms] of Object.entries(threadCpuMs(dispatcher.pid))) {
  threads[name] = Math.round((ms / total) * 10000) / 10;
}
console.log(
  JSON.stringify({
    total,
    env,
    perSecond: Math.round(total / seconds),
    cpuMsPerDelivery: +(cpu / total).toFixed(3),
    cpuUsPerDeliveryByThread: threads,
  }),
);
await dispatcher.stop();
await receiver.stop();
if (sqlTimes) {
  const times = JSON.parse(await Bun.file(sqlTimes).text()) as [string, number, number][];
  const all = times.reduce((sum, [, , ms]) => sum + ms, 0);
  console.log(`SQL on the main thread: ${((all / total) * 1000).toFixed(1)} us per delivery; by statement:`);
  for (const [sql, calls, ms] of times.sort((a, b) => b[2] - a[2]).slice(0, 20))
    console.log(`${((ms / total) * 1000).toFixed(1).padStart(6)} us  ${String(calls).padStart(6)}x  ${sql}`);
}
