// Issue 12, session 8: commits alone with the writer on its own thread against the main thread, in
// process (the app's fetch handler, 64 commits in flight, one record and one event each, FULL, no
// endpoint, no dispatcher): both modes open side by side in this one process and run blocks of
// 1,024 commits in turn (A B, B A, …), so a busy machine weighs on both alike. Per block: the
// whole process's CPU per commit (every thread: the writer thread's too), the main thread's, and
// commits per second. Prints medians per side and the median of the per-pair ratios to `main`.
//   bun bench/probe/writer-thread-commits.ts [pairs=8]
//   ROOT=/path/to/other/checkout bun bench/probe/writer-thread-commits.ts   # adds its worker mode
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inProcessOutboxd, median } from "../lib.ts";

/** ms on a CPU so far per thread name of this process (schedstat: ns, not the stat file's 10 ms ticks). */
function threadMs(): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const name =
        tid === String(process.pid) ? "main" : readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      byName.set(name, (byName.get(name) ?? 0) + ns / 1e6);
    } catch {
      // the thread ended since the listing
    }
  }
  return byName;
}

// Messages of writes posted to writer threads (and the writes in them): how well they are batched.
const posted = { messages: 0, writes: 0 };
const postMessage = Worker.prototype.postMessage as (...args: unknown[]) => void;
Worker.prototype.postMessage = function (this: Worker, ...args: unknown[]) {
  const message = args[0] as { kind?: string; writes?: unknown[] | string };
  if (message?.kind === "write") {
    posted.messages += 1;
    // Plain writes (commits) go as JSON text: not parsed here, which would cost this thread.
    posted.writes += typeof message.writes === "string" ? Number.NaN : (message.writes?.length ?? 0);
  }
  return postMessage.apply(this, args);
};

const TOKEN = "bench-writer-thread-commits";
const pairs = Number(process.argv[2] ?? 8);
const here = join(import.meta.dir, "../..");

async function side(label: string, root: string, mode: "main" | "worker") {
  const { COMMIT_BODY } = await import(join(root, "bench/scenarios/commit.ts"));
  const { outboxd, stop } = await inProcessOutboxd({
    token: TOKEN,
    root,
    env: { OUTBOXD_SYNCHRONOUS: "FULL", OUTBOXD_WRITER_THREAD: mode },
  });
  let next = 0;
  const commit = async () => {
    const response = await outboxd.http.fetch(
      new Request("http://outboxd/v1/commits", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: COMMIT_BODY.replaceAll("[<id>]", String(next++)),
      }),
    );
    if (response.status !== 201)
      throw new Error(`commit answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  const block = async (count: number) => {
    const thread = process.threadCpuUsage();
    const all = process.cpuUsage();
    const threads0 = threadMs();
    const posted0 = { ...posted };
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = 0; i < count / 64; i++) await commit();
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    const t = process.threadCpuUsage(thread);
    const a = process.cpuUsage(all);
    const threads: Record<string, number> = {};
    for (const [name, ms] of threadMs()) threads[name] = ((ms - (threads0.get(name) ?? 0)) * 1000) / count;
    return {
      writesPerMessage:
        posted.messages === posted0.messages
          ? 0
          : Number.isNaN(posted.writes - posted0.writes)
            ? count / (posted.messages - posted0.messages)
            : (posted.writes - posted0.writes) / (posted.messages - posted0.messages),
      threads,
      main: (t.user + t.system) / count,
      all: (a.user + a.system) / count,
      perSecond: count / seconds,
    };
  };
  return {
    label,
    block,
    stop,
    runs: [] as {
      main: number;
      all: number;
      perSecond: number;
      writesPerMessage: number;
      threads: Record<string, number>;
    }[],
  };
}

const sides = [await side("main", here, "main"), await side("worker", here, "worker")];
if (process.env.ROOT) sides.push(await side("worker (ROOT)", process.env.ROOT, "worker"));
try {
  for (const s of sides) await s.block(2048);
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const s of order) s.runs.push(await s.block(1024));
  }
} finally {
  for (const s of sides) await s.stop();
}
const base = sides[0] as (typeof sides)[number];
for (const s of sides) {
  const ratio = (k: "all" | "perSecond") =>
    +median(s.runs.map((r, i) => r[k] / ((base.runs[i] as (typeof s.runs)[number])[k] as number))).toFixed(3);
  console.log(
    JSON.stringify({
      side: s.label,
      processUsPerCommit: +median(s.runs.map((r) => r.all)).toFixed(1),
      mainThreadUsPerCommit: +median(s.runs.map((r) => r.main)).toFixed(1),
      commitsPerSecond: Math.round(median(s.runs.map((r) => r.perSecond))),
      writesPerMessage: +median(s.runs.map((r) => r.writesPerMessage)).toFixed(1),
      cpuToMain: ratio("all"),
      rateToMain: ratio("perSecond"),
      threadsUsPerCommit: Object.fromEntries(
        [...new Set(s.runs.flatMap((r) => Object.keys(r.threads)))]
          .map((name) => [name, +median(s.runs.map((r) => r.threads[name] ?? 0)).toFixed(1)] as const)
          .filter(([, us]) => us >= 1),
      ),
    }),
  );
}
