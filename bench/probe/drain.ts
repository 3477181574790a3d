// CPU per delivery of a standalone dispatcher (`outboxd dispatch`) draining a backlog over 1,000
// aggregates to the bench receiver: the dispatcher's own cost, steadier than its rate
// on a shared machine. PROF_DIR=dir: a `bun --cpu-prof-md` profile of the dispatcher. Also prints
// the CPU per delivery of each of its threads (`main` is the dispatcher's own; Bun names every
// Worker "Worker", so they are numbered in the order they started: Worker1 is the checkpoint
// worker), and the receiver process's: the figures A/B runs compare.
// LIMIT=1: first, bare `fetch` ×64 to the same receiver for 3 s (bench/peers/bare-fetch.ts, the
// backlog scenario's limit), with its process's and the receiver's CPU per request: what a drain
// with no bookkeeping at all would cost on this host.
// SQL_TIMES=1: also the main thread's time per delivery in each SQL statement (sql-times-preload.ts).
// PERF=file: `perf record -g` of the dispatcher's main thread (PERF_THREAD=Worker: its first Worker,
// the writer thread) for PERF_SECONDS (3) from 1 s into the drain, with JSC's JITDump on, then
// bench/probe/perf-split.ts on it: where that thread's time goes, inside JS and out, by JIT name.
// CHECK=1: `PRAGMA integrity_check` of the drained file once the dispatcher has stopped (prints
// {"integrity": …}; exit 1 unless ok).
//   bun bench/probe/drain.ts [total=10000] [KEY=VALUE env for the dispatcher …]
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../src/db/sqlite-open.ts";
import { newSecret } from "../../test/helpers/snippet-receiver.ts";
import { BUN, cpuMs, REPO, startOutboxd, startPeer, taskCpuMs, tempDir, waitUntil } from "../lib.ts";
import { prefill } from "../scenarios/delivery.ts";

const total = Number(process.argv[2] ?? 10000);
const env = Object.fromEntries(process.argv.slice(3).map((kv) => kv.split("=", 2) as [string, string]));
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
// Whatever ends this probe ends the receiver too (it would outlive a throw).
process.on("exit", () => {
  try {
    process.kill(receiver.pid);
  } catch {
    // stopped already
  }
});
const perRequest = (ms: number, n: number) => Math.round((ms / n) * 10000) / 10;

/** CPU ms per thread, Workers numbered in the order they started (thread ids grow). */
function byThread(tasks: ReturnType<typeof taskCpuMs>): Record<string, number> {
  const threads: Record<string, number> = {};
  let workers = 0;
  for (const [, { name, ms }] of Object.entries(tasks).sort(([a], [b]) => Number(a) - Number(b))) {
    const key = name === "Worker" ? `Worker${++workers}` : name;
    threads[key] = (threads[key] ?? 0) + ms;
  }
  return threads;
}

if (process.env.LIMIT) {
  const before = cpuMs(receiver.pid);
  const proc = Bun.spawn({
    cmd: [BUN, "bench/peers/bare-fetch.ts"],
    cwd: REPO,
    env: { ...process.env, RECEIVER_URL: `${receiver.url}/hook`, DURATION: "3" },
    stdout: "pipe",
    stderr: "inherit",
  });
  // Its threads, read every 50 ms until it ends: each thread's last reading (some end before the
  // process does; the last reading is at most 50 ms short).
  const tasks: ReturnType<typeof taskCpuMs> = {};
  const reading = setInterval(() => {
    try {
      Object.assign(tasks, taskCpuMs(proc.pid));
    } catch {
      // it has ended
    }
  }, 50);
  const out = JSON.parse((await new Response(proc.stdout).text()).trim().split("\n").at(-1) ?? "{}");
  await proc.exited;
  clearInterval(reading);
  const fetcherMs = Number(proc.resourceUsage()?.cpuTime.total ?? 0) / 1000;
  const n = out.requests as number;
  const fetcherThreads: Record<string, number> = {};
  for (const [name, ms] of Object.entries(byThread(tasks))) fetcherThreads[name] = perRequest(ms, n);
  console.log(
    JSON.stringify({
      limit: "bare fetch x64",
      perSecond: out.requestsPerSecond,
      cpuUsPerRequest: {
        fetcher: perRequest(fetcherMs, n),
        receiver: perRequest(cpuMs(receiver.pid) - before, n),
      },
      fetcherCpuUsPerRequestByThread: fetcherThreads,
    }),
  );
}

const dir = tempDir("outboxd-probe-drain-");
await prefill(dir, { url: `${receiver.url}/hook`, secret: newSecret() }, total, 1000);
const count = async () => ((await (await fetch(`${receiver.url}/count`)).json()) as { count: number }).count;
const counted = await count();
const receiverBefore = cpuMs(receiver.pid);
const sqlTimes = process.env.SQL_TIMES ? join(tempDir("outboxd-probe-sql-"), "times.json") : null;
const jitDumps = process.env.PERF ? tempDir("outboxd-probe-jitdump-") : null;
const dispatcherEnv = {
  ...env,
  ...(sqlTimes ? { SQL_TIMES: sqlTimes } : {}),
  ...(jitDumps ? { BUN_JSC_useJITDump: "1", BUN_JSC_jitDumpDirectory: jitDumps } : {}),
};
const dispatcher = await startOutboxd(dispatcherEnv, "dispatch", dir, [
  ...(process.env.PROF_DIR ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.PROF_DIR}`] : []),
  ...(sqlTimes ? ["--preload", join(REPO, "bench/probe/sql-times-preload.ts")] : []),
]);
const started = performance.now();
const recording = process.env.PERF ? record(process.env.PERF) : null;
await waitUntil("the backlog to drain", async () => (await count()) >= counted + total, 600_000);
const seconds = (performance.now() - started) / 1000;
const cpu = cpuMs(dispatcher.pid);
const threads: Record<string, number> = {};
for (const [name, ms] of Object.entries(byThread(taskCpuMs(dispatcher.pid))))
  threads[name] = perRequest(ms, total);
const receiverUs = perRequest(cpuMs(receiver.pid) - receiverBefore, total);
// The dispatcher's peak RSS (VmHWM): what an allocator setting such as MIMALLOC_PURGE_DELAY trades.
const peakRssMb = Math.round(
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${dispatcher.pid}/status`, "utf8"))?.[1] ?? 0) / 1024,
);
console.log(
  JSON.stringify({
    total,
    env,
    perSecond: Math.round(total / seconds),
    cpuMsPerDelivery: +(cpu / total).toFixed(3),
    cpuUsPerDeliveryByThread: threads,
    receiverCpuUsPerDelivery: receiverUs,
    allCpuUsPerDelivery: Math.round(perRequest(cpu, total) + receiverUs),
    peakRssMb,
  }),
);
await recording;
// JSC writes its JITDump from a thread of its own: a moment for it to catch up before the stop.
if (recording) await Bun.sleep(2000);
if (process.env.CHECK) {
  // Stopped as stop() does (SIGTERM), but the file checked before stop() removes the directory.
  process.kill(dispatcher.pid, "SIGTERM");
  await waitUntil("the dispatcher to exit", async () => !existsSync(`/proc/${dispatcher.pid}`), 30_000);
  const file = openSqlite(join(dir, "outboxd.db"), { readonly: true });
  const integrity = file
    .prepare("PRAGMA integrity_check")
    .all()
    .map((row) => row.integrity_check);
  file.close();
  console.log(JSON.stringify({ integrity: integrity.join("; ") }));
  if (integrity.join() !== "ok") process.exitCode = 1;
}
await dispatcher.stop();
await receiver.stop();
if (process.env.PERF && jitDumps) {
  const split = Bun.spawn([BUN, join(REPO, "bench/probe/perf-split.ts"), process.env.PERF, jitDumps], {
    stdout: "inherit",
    stderr: "inherit",
  });
  await split.exited;
}
if (sqlTimes) {
  const times = JSON.parse(await Bun.file(sqlTimes).text()) as [string, number, number][];
  const all = times.reduce((sum, [, , ms]) => sum + ms, 0);
  console.log(`SQL on the main thread: ${((all / total) * 1000).toFixed(1)} us per delivery; by statement:`);
  for (const [sql, calls, ms] of times.sort((a, b) => b[2] - a[2]).slice(0, 20))
    console.log(`${((ms / total) * 1000).toFixed(1).padStart(6)} us  ${String(calls).padStart(6)}x  ${sql}`);
}

/** perf record of one of the dispatcher's threads, from 1 s into the drain (PERF above). */
async function record(file: string): Promise<void> {
  await Bun.sleep(1000);
  const wanted = process.env.PERF_THREAD;
  const tasks = Object.entries(taskCpuMs(dispatcher.pid)).sort(([a], [b]) => Number(a) - Number(b));
  const tid = wanted ? tasks.find(([, t]) => t.name === wanted)?.[0] : String(dispatcher.pid);
  if (tid === undefined) throw new Error(`the dispatcher has no thread named ${wanted}`);
  const seconds = process.env.PERF_SECONDS ?? "3";
  const perf = Bun.spawn(["perf", "record", "-g", "-k", "1", "-o", file, "-t", tid, "--", "sleep", seconds], {
    stdout: "ignore",
    stderr: "ignore",
  });
  await perf.exited;
}
