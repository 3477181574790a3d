// Where a delivery's slot cycle goes when commits flood the same process (issue 12): open-loop
// commits at RATE/s for SECONDS to `outboxd serve` with one endpoint (as the latency scenario),
// with bench/probe/slot-cycle-preload.ts noting each delivery's stages in the server. Prints,
// for the measured run's deliveries (ms, p50/p90/p99): commit → its predecessor in the aggregate
// written (the order wait), → joined the slots (claim or lease lag), → send started, → answer seen
// on the main thread, → outcome written; the writer's wait for the dispatcher's bookkeeping; the
// event loop's lag and the slots' occupancy sampled every 2 ms while committing; deliveries/s
// while committing; CPU per event by thread. ROOT=other checkout: its server (alternate, same minutes).
//   [ROOT=/path] bun bench/probe/slot-cycle.ts [rate=2000] [seconds=5] [KEY=VALUE env for outboxd …]
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { BUN, percentile, REPO, tempDir } from "../lib.ts";

const rate = Number(process.argv[2] ?? 2000);
const seconds = Number(process.argv[3] ?? 5);
const env = Object.fromEntries(process.argv.slice(4).map((kv) => kv.split("=", 2) as [string, string]));
const root = process.env.ROOT ?? REPO;
const lib = (await import(`${root}/bench/lib.ts`)) as typeof import("../lib.ts");
// That checkout's load too: it commits with the token its lib gave the server.
const { fixedRate } = (await import(
  `${root}/bench/scenarios/latency.ts`
)) as typeof import("../scenarios/latency.ts");
const outDir = tempDir("outboxd-slot-cycle-");
const out = join(outDir, "stages.json");
const receiver = await lib.startPeer([BUN, join(REPO, "bench/peers/receiver.ts")], {});
const server = await lib.startOutboxd({ ...env, PROBE_OUT: out }, "serve", undefined, [
  "--preload",
  join(REPO, "bench/probe/slot-cycle-preload.ts"),
]);
await server.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
const count = async () => ((await (await fetch(`${receiver.url}/count`)).json()) as { count: number }).count;

const warm = await fixedRate({ url: server.url, receiverUrl: receiver.url, rate: 500, seconds: 2 });
await lib.waitUntil("the warm-up to arrive", async () => (await count()) >= warm.committed, 120_000);
const threads0 = lib.threadCpuMs(server.pid);
const startedAt = Date.now();
// What outboxd's main thread and its workers are doing, sampled every 2 ms from outside while the
// load runs: on a CPU or waiting for one (R), or asleep in which system call (/proc/…/syscall).
const SYSCALLS: Record<string, string> = {
  "7": "poll",
  "35": "nanosleep",
  "75": "fdatasync",
  "202": "futex",
  "230": "clock_nanosleep",
  "232": "epoll_wait",
  "281": "epoll_pwait",
  "0": "read",
  "1": "write",
  "17": "pread",
  "18": "pwrite",
};
const states = new Map<string, Map<string, number>>();
const sampler = setInterval(() => {
  for (const tid of readdirSync(`/proc/${server.pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${server.pid}/task/${tid}/stat`, "utf8");
      const name =
        tid === String(server.pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (name !== "main" && name !== "Worker") continue;
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      let what = state;
      if (state !== "R") {
        const call = readFileSync(`/proc/${server.pid}/task/${tid}/syscall`, "utf8").split(" ")[0] ?? "?";
        what = `${state}:${SYSCALLS[call] ?? call}`;
      }
      const key = `${name}/${tid}`;
      const tally = states.get(key) ?? new Map<string, number>();
      tally.set(what, (tally.get(what) ?? 0) + 1);
      states.set(key, tally);
    } catch {
      // the thread ended
    }
  }
}, 2);
const result = await fixedRate({ url: server.url, receiverUrl: receiver.url, rate, seconds });
clearInterval(sampler);
const loadEnd = startedAt + seconds * 1000;
const arrivals = (await (await fetch(`${receiver.url}/arrivals?since=${startedAt}`)).json()) as {
  at: number;
}[];
const whileCommitting = arrivals.filter((a) => a.at <= loadEnd).length / seconds;
await lib.waitUntil(
  "every event to arrive",
  async () => (await count()) >= warm.committed + result.committed,
  600_000,
);
const threads: Record<string, number> = {};
for (const [name, used] of Object.entries(lib.threadCpuMs(server.pid))) {
  threads[name] = Math.round(((used - (threads0[name] ?? 0)) / result.committed) * 10000) / 10;
}
await server.stop();
await receiver.stop();

const data = JSON.parse(await Bun.file(out).text()) as {
  committed: [string, number][];
  deliveries: [string, string, string, number, number, number, number, number][];
  bookkeeping: [number, number][];
  samples: [number, number, number, number, number, number, number, number][];
  syncs: [number, number][];
  wal: [number, number, number][];
  leasedBy: Record<string, number> | null;
  timeOrigin?: number;
  threadWrites?: [number, string, number, number, number][];
  writeOf?: Record<string, number>;
  budgets?: { with: number; without: number };
};
// With the writer on its own thread: what it noted of each write (slot-cycle-writer.ts).
const writerData = (await Bun.file(`${out}.writer.json`).exists())
  ? (JSON.parse(await Bun.file(`${out}.writer.json`).text()) as {
      writes: [number, [number, number, number, number, number]][];
      commits: number[];
      samples: [number, number, number][];
    })
  : null;
rmSync(outDir, { recursive: true, force: true });
const measured = data.committed.slice(warm.committed);
const committedAt = new Map(data.committed);
const from = measured[0]?.[1] ?? 0;
const to = measured.at(-1)?.[1] ?? 0;
const written = new Map<string, number>();
for (const [, , aggregate, sequence, , , , w] of data.deliveries)
  written.set(`${aggregate}\u0000${sequence}`, w);
const stages: Record<string, number[]> = {
  "commit→predecessor written": [],
  "→ joined the slots": [],
  "→ send started": [],
  "→ answer seen": [],
  "→ outcome written": [],
  "commit→outcome written": [],
};
/** Per measured delivery: when it was committed and its stages, in the order of `stages`. */
const measuredStages: { eventId: string; committedAt: number; stages: number[] }[] = [];
for (const [, eventId, aggregate, sequence, ready, started, answered, w] of data.deliveries) {
  const c = committedAt.get(eventId);
  if (c === undefined || c < from || !w) continue;
  const before = written.get(`${aggregate}\u0000${sequence - 1}`) ?? 0;
  const free = Math.max(c, before);
  const times = [
    free - c,
    Math.max(0, ready - free),
    started - ready,
    answered - started,
    w - answered,
    w - c,
  ];
  for (const [i, xs] of Object.values(stages).entries()) xs.push(times[i] as number);
  measuredStages.push({ eventId, committedAt: c, stages: times });
}
const during = data.samples.filter(([at]) => at >= from && at <= to);
const lag = during.map(([, l]) => Math.max(0, l));
const fmt = (xs: number[]) =>
  `p50 ${percentile(xs, 50).toFixed(1)} p90 ${percentile(xs, 90).toFixed(1)} p99 ${percentile(xs, 99).toFixed(1)} (n ${xs.length})`;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
console.log(
  JSON.stringify({
    rate,
    seconds,
    env,
    load: loadavg()[0]?.toFixed(1),
    committed: result.committed,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    waitingAtStop: result.waitingAtStop,
    deliveredPerSecondWhileCommitting: Math.round(whileCommitting),
    leasedBy: data.leasedBy,
    commitsPostedWithLeaseBudget: data.budgets,
    cpuUsPerEventByThread: threads,
  }),
);
for (const [k, xs] of Object.entries(stages)) console.log(`${k.padEnd(28)} ${fmt(xs)}`);
const waits = data.bookkeeping.filter(([at]) => at >= from && at <= to).map(([a, b]) => b - a);
console.log(`${"writer wait (bookkeeping)".padEnd(28)} ${fmt(waits)}`);
console.log(
  `${"event loop lag (2 ms timer)".padEnd(28)} ${fmt(lag)} sum ${(lag.reduce((a, b) => a + b, 0) / (to - from)).toFixed(2)} of the time`,
);
// The tail: the slowest 1% (commit → outcome written), where their time went and when they were
// committed (ms after the measured run began): a burst at one moment points at a stall (a long
// event-loop turn, a slow fsync), a spread at a rate the process cannot keep.
const slowest = measuredStages
  .sort((a, b) => (b.stages[5] as number) - (a.stages[5] as number))
  .slice(0, Math.max(1, Math.ceil(measuredStages.length / 100)));
const slowestEvents = slowest.map((d) => d.eventId);
const stageMeans = Object.keys(stages).map(
  (name, i) => `${name.replace("→ ", "")} ${mean(slowest.map((d) => d.stages[i] as number)).toFixed(1)}`,
);
console.log(`slowest 1% (${slowest.length}), mean ms: ${stageMeans.join(", ")}`);
const bySecond = new Map<number, number>();
for (const d of slowest) {
  const at = Math.floor((d.committedAt - from) / 100) * 100;
  bySecond.set(at, (bySecond.get(at) ?? 0) + 1);
}
console.log(
  `slowest 1% committed at (ms into the run: count): ${[...bySecond]
    .sort((a, b) => a[0] - b[0])
    .map(([at, n]) => `${at}:${n}`)
    .join(" ")}`,
);
const stalls: string[] = [];
const stallTimes = { run: 0, wait: 0, length: 0 };
during.forEach(([at, l, , , heap, compiled, run, wait], i) => {
  const [, , , , heapBefore, compiledBefore, runBefore, waitBefore] = during[i - 1] ?? during[i] ?? [];
  if (l <= 20) return;
  const heapDelta = heap - (heapBefore ?? heap);
  const jit = compiled - (compiledBefore ?? compiled);
  const ran = run - (runBefore ?? run);
  const waited = wait - (waitBefore ?? wait);
  stallTimes.run += ran;
  stallTimes.wait += waited;
  stallTimes.length += l + 2;
  stalls.push(
    `${Math.round(at - l - from)}+${Math.round(l)} (heap ${heapDelta.toFixed(0)} MB, JIT ${jit.toFixed(0)} ms, ran ${ran.toFixed(0)}, waited for a CPU ${waited.toFixed(0)})`,
  );
});
console.log(
  `event loop stalls > 20 ms (start+length ms into the run, heap change, JIT compile time, main thread's ms on a CPU and waiting for one): ${stalls.join(" ") || "none"}`,
);
console.log(
  `the stalls' ${stallTimes.length.toFixed(0)} ms: main thread on a CPU ${stallTimes.run.toFixed(0)}, waiting for a CPU ${stallTimes.wait.toFixed(0)}, neither (blocked) ${(stallTimes.length - stallTimes.run - stallTimes.wait).toFixed(0)}`,
);
const syncWaits = data.syncs.filter(([at]) => at >= from && at <= to).map(([a, b]) => b - a);
console.log(`${"WAL fsync wait".padEnd(28)} ${fmt(syncWaits)} max ${Math.max(0, ...syncWaits).toFixed(1)}`);
{
  const first = during[0];
  const final = during.at(-1);
  if (first && final) {
    const wall = final[0] - first[0];
    console.log(
      `main thread over the run: on a CPU ${(((final[6] - first[6]) / wall) * 100).toFixed(0)}% of the time, waiting for a CPU ${(((final[7] - first[7]) / wall) * 100).toFixed(0)}%`,
    );
  }
}
if (writerData && data.threadWrites && data.writeOf && data.timeOrigin !== undefined) {
  // Each write's hops, main thread → writer thread → main thread (absolute ms on both sides).
  const origin = data.timeOrigin;
  const commits = writerData.commits;
  const thereOf = new Map(writerData.writes);
  const HOPS = [
    "queued→posted",
    "posted→writer got it",
    "→ started",
    "→ committed",
    "→ settled (WAL sync)",
    "→ answer posted",
    "→ main got it",
  ];
  const hopsOf = new Map<number, number[]>();
  let c = 0;
  const sortedCommits = [...commits].sort((a, b) => a - b);
  for (const [id, , queued, posted, answered] of [...data.threadWrites].sort((a, b) => a[0] - b[0])) {
    const there = thereOf.get(id);
    if (!there || !answered || !posted) continue;
    const [received, started, , settled, answerPosted] = there;
    while (c > 0 && (sortedCommits[c - 1] as number) > started) c--;
    while (c < sortedCommits.length && (sortedCommits[c] as number) < started) c++;
    const committed = sortedCommits[c] ?? settled;
    hopsOf.set(id, [
      posted - queued,
      received - posted,
      started - received,
      committed - started,
      settled - committed,
      answerPosted - settled,
      answered - answerPosted,
    ]);
  }
  const fromAbs = origin + from;
  const toAbs = origin + to;
  for (const name of ["commit", "dispatch.completeAndClaim"]) {
    const rows = data.threadWrites.filter(
      ([id, n, queued]) => n === name && queued >= fromAbs && queued <= toAbs && hopsOf.has(id),
    );
    console.log(`writer thread hops of ${name} (${rows.length} writes), ms:`);
    HOPS.forEach((hop, i) => {
      console.log(
        `  ${hop.padEnd(26)} ${fmt(rows.map(([id]) => (hopsOf.get(id) as number[])[i] as number))}`,
      );
    });
  }
  // How well writes are batched: messages each way (a message's writes share its post time, an
  // answer message's answers their post time there).
  const inRun = data.threadWrites.filter(([, , queued]) => queued >= fromAbs && queued <= toAbs);
  const postedMessages = new Set(inRun.map(([, , , posted]) => posted)).size;
  const answerMessages = new Set(inRun.map(([id]) => thereOf.get(id)?.[4] ?? 0)).size;
  console.log(
    `writes while committing: ${inRun.length}, messages posted ${postedMessages} (${(inRun.length / Math.max(1, postedMessages)).toFixed(1)} writes each), answer messages ${answerMessages} (${(inRun.length / Math.max(1, answerMessages)).toFixed(1)} each); per event ${((postedMessages + answerMessages) / Math.max(1, measured.length)).toFixed(2)} messages`,
  );
  // The slowest 1% of deliveries: the hops of the commit that made them and of the write of their outcome.
  const writeOf = data.writeOf;
  const deliveryIds = new Map(data.deliveries.map((d) => [d[1], d[0]]));
  for (const [label, key] of [
    ["their commit", (eventId: string) => writeOf[eventId]],
    ["their outcome", (eventId: string) => writeOf[deliveryIds.get(eventId) ?? ""]],
  ] as const) {
    const hops = slowestEvents
      .map((eventId) => hopsOf.get(key(eventId) ?? -1))
      .filter((h) => h !== undefined);
    console.log(
      `slowest 1%: ${label}'s write (${hops.length}), mean ms: ${HOPS.map((hop, i) => `${hop} ${mean(hops.map((h) => h[i] as number)).toFixed(1)}`).join(", ")}`,
    );
  }
  const writerDuring = writerData.samples.filter(([at]) => at >= fromAbs && at <= toAbs);
  const first = writerDuring[0];
  const final = writerDuring.at(-1);
  if (first && final) {
    const wall = final[0] - first[0];
    console.log(
      `writer thread over the run: on a CPU ${(((final[1] - first[1]) / wall) * 100).toFixed(0)}% of the time, waiting for a CPU ${(((final[2] - first[2]) / wall) * 100).toFixed(0)}%`,
    );
  }
}
// The threads' states while the load ran (main, and the workers that were ever on a CPU).
for (const [thread, tally] of states) {
  const total = [...tally.values()].reduce((a, b) => a + b, 0);
  if (!tally.has("R") && thread !== `main/${server.pid}`) continue;
  const parts = [...tally]
    .sort((a, b) => b[1] - a[1])
    .map(([what, n]) => `${what} ${((n / total) * 100).toFixed(0)}%`)
    .join(", ");
  console.log(`thread ${thread} (${total} samples): ${parts}`);
}
const slowSyncs = data.syncs
  .filter(([at, done]) => at >= from && at <= to && done - at > 20)
  .map(([at, done]) => `${Math.round(at - from)}+${Math.round(done - at)}`);
console.log(`WAL fsync waits > 20 ms (start+length, ms into the run): ${slowSyncs.join(" ") || "none"}`);
// Checkpoints: the checkpointed count rises (the worker copied frames), the last frame falls (the WAL started over).
const checkpoints: string[] = [];
data.wal.forEach(([at, frames, copied], i) => {
  const previous = data.wal[i - 1];
  if (!previous || at < from || at > to) return;
  if (copied > previous[2]) checkpoints.push(`${Math.round(at - from)}:copied ${copied - previous[2]}`);
  if (frames < previous[1]) checkpoints.push(`${Math.round(at - from)}:restart`);
});
console.log(`WAL checkpoints (ms into the run): ${checkpoints.join(" ") || "none"}`);
console.log(
  `slots while committing: in flight mean ${mean(during.map((s) => s[2])).toFixed(1)}, ready mean ${mean(during.map((s) => s[3])).toFixed(1)}, ` +
    `starved (in flight < 8, none ready) ${((during.filter((s) => s[2] < 8 && s[3] === 0).length / Math.max(1, during.length)) * 100).toFixed(0)}% of samples`,
);
