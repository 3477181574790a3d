// Issue 12, session 7: the writer on the main thread vs on its own (OUTBOXD_WRITER_THREAD), A/B
// in the same minutes. The latency scenario's setup (bench/scenarios/latency.ts: open-loop commits
// from a separate process, one endpoint at a separate receiver, commit response → arrival), run
// alternately in each mode at each rate, with the CPU of each of outboxd's threads over the
// measured window (/proc/<pid>/task): main-thread and total µs per event are the figures a shared
// 2-core machine can still compare.
//
//   npx bun bench/probe/writer-thread-ab.ts                      # 2,000 4,000 5,000/s, 2 pairs, 3 s
//   RATES=2000,4000 PAIRS=3 SECONDS=5 npx bun bench/probe/writer-thread-ab.ts
//   COMMITS=1 PAIRS=3 npx bun bench/probe/writer-thread-ab.ts    # commits alone instead: HTTP, 64
//                                                                 # connections, no endpoint, FULL
//   ROOT=/path/to/other/checkout npx bun bench/probe/writer-thread-ab.ts
//       # this tree's worker mode against that tree's (run from it: `bun --cwd`), instead of main
//
// One JSON line per run on stdout; a table of medians on stderr at the end.
import { load, median, startOutboxd, startPeer, TOKEN, taskCpuMs } from "../lib.ts";
import { COMMIT_BODY } from "../scenarios/commit.ts";
import { fixedRate } from "../scenarios/latency.ts";

const BUN = process.execPath;
const RATES = (process.env.RATES ?? "2000,4000,5000").split(",").map(Number);
const PAIRS = Number(process.env.PAIRS ?? 2);
const SECONDS = Number(process.env.SECONDS ?? 3);
const WARMUP_SECONDS = Number(process.env.WARMUP_SECONDS ?? 1);
const ROOT = process.env.ROOT;
/** The modes compared: `root` is the worker mode of the ROOT tree. */
const MODES = ROOT ? (["worker", "root"] as const) : (["main", "worker"] as const);
type Mode = "main" | "worker" | "root";

/** outboxd in this mode: OUTBOXD_WRITER_THREAD, or ROOT's tree in its worker mode. */
function outboxdIn(mode: Mode) {
  return mode === "root"
    ? startOutboxd({ OUTBOXD_WRITER_THREAD: "worker" }, "serve", undefined, ["--cwd", ROOT as string])
    : startOutboxd({ OUTBOXD_WRITER_THREAD: mode });
}
const COMMITS = process.env.COMMITS === "1";

interface Run {
  mode: Mode;
  rate: number;
  committed: number;
  delivered: number;
  sustained: boolean;
  p50Ms: number;
  p99Ms: number;
  waitingAtStop: number;
  mainUsPerEvent: number;
  otherUsPerEvent: number;
  totalUsPerEvent: number;
  /** CPU ms per thread name over the window. */
  threads: Record<string, number>;
}

/** CPU ms per thread name between two readings, and the main thread's and the others' sums. */
function spent(before: ReturnType<typeof taskCpuMs>, after: ReturnType<typeof taskCpuMs>) {
  const threads: Record<string, number> = {};
  let main = 0;
  let other = 0;
  for (const [tid, { name, ms }] of Object.entries(after)) {
    const ms0 = ms - (before[tid]?.ms ?? 0);
    threads[name] = (threads[name] ?? 0) + ms0;
    if (name === "main") main += ms0;
    else other += ms0;
  }
  return { threads, main, other };
}

/** Commits alone over HTTP (the commits scenario's 64-connection FULL row), CPU per commit. */
async function measureCommits(mode: Run["mode"]) {
  const outboxd = await outboxdIn(mode);
  try {
    const run = () =>
      load({
        url: `${outboxd.url}/v1/commits`,
        connections: 64,
        seconds: SECONDS,
        body: COMMIT_BODY,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    await run();
    const before = taskCpuMs(outboxd.pid);
    const result = await run();
    const { threads, main, other } = spent(before, taskCpuMs(outboxd.pid));
    const commits = Math.max(1, result.requestsPerSecond * SECONDS);
    return {
      mode,
      commitsPerSecond: result.requestsPerSecond,
      p50Ms: result.latencyP50Ms,
      p99Ms: result.latencyP99Ms,
      errors: result.errors + result.non2xx,
      mainUsPerCommit: Math.round((main * 1000) / commits),
      otherUsPerCommit: Math.round((other * 1000) / commits),
      totalUsPerCommit: Math.round(((main + other) * 1000) / commits),
      threads,
    };
  } finally {
    await outboxd.stop();
  }
}

async function measure(mode: Run["mode"], rate: number): Promise<Run> {
  const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  const outboxd = await outboxdIn(mode);
  try {
    await outboxd.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
    await fixedRate({ url: outboxd.url, receiverUrl: receiver.url, rate, seconds: WARMUP_SECONDS });
    const before = taskCpuMs(outboxd.pid);
    const result = await fixedRate({ url: outboxd.url, receiverUrl: receiver.url, rate, seconds: SECONDS });
    const { threads, main, other } = spent(before, taskCpuMs(outboxd.pid));
    const perEvent = (ms: number) => Math.round((ms * 1000) / Math.max(1, result.committed));
    return {
      mode,
      rate,
      committed: result.committed,
      delivered: result.delivered,
      sustained: result.errors === 0 && result.drained && result.waitingAtStop <= rate / 10,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      waitingAtStop: result.waitingAtStop,
      mainUsPerEvent: perEvent(main),
      otherUsPerEvent: perEvent(other),
      totalUsPerEvent: perEvent(main + other),
      threads,
    };
  } finally {
    await outboxd.stop();
    await receiver.stop();
  }
}

if (COMMITS) {
  const rows: Awaited<ReturnType<typeof measureCommits>>[] = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    for (const mode of pair % 2 === 0 ? MODES : [...MODES].reverse()) {
      const row = await measureCommits(mode);
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  console.error("| mode | commits/s | p99 ms | main µs/commit | other threads µs/commit | total µs/commit |");
  console.error("| --- | --- | --- | --- | --- | --- |");
  for (const mode of MODES) {
    const mine = rows.filter((r) => r.mode === mode);
    console.error(
      `| ${mode} | ${median(mine.map((r) => r.commitsPerSecond))} | ${median(mine.map((r) => r.p99Ms))} | ${median(mine.map((r) => r.mainUsPerCommit))} | ${median(mine.map((r) => r.otherUsPerCommit))} | ${median(mine.map((r) => r.totalUsPerCommit))} |`,
    );
  }
  process.exit(0);
}

const runs: Run[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  for (const rate of RATES) {
    // Alternated, the first mode of each pair in turn, so neither always runs on a warmer machine.
    const order = pair % 2 === 0 ? MODES : [...MODES].reverse();
    for (const mode of order) {
      const run = await measure(mode, rate);
      runs.push(run);
      console.log(JSON.stringify(run));
    }
  }
}

console.error(
  "| rate/s | mode | sustained | p50 ms | p99 ms | main µs/event | other threads µs/event | total µs/event |",
);
console.error("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const rate of RATES) {
  for (const mode of MODES) {
    const mine = runs.filter((r) => r.rate === rate && r.mode === mode);
    console.error(
      `| ${rate} | ${mode} | ${mine.filter((r) => r.sustained).length}/${mine.length} | ${median(mine.map((r) => r.p50Ms))} | ${median(mine.map((r) => r.p99Ms))} | ${median(mine.map((r) => r.mainUsPerEvent))} | ${median(mine.map((r) => r.otherUsPerEvent))} | ${median(mine.map((r) => r.totalUsPerEvent))} |`,
    );
  }
}
