// Tracing's CPU per commit measured so that a shared, busy machine weighs on both sides alike
// (issue 18), as bench/scenarios/ledger-cpu.ts does for the ledger: one process runs outboxd with
// tracing on (spans exported to an OTLP sink in another process) and commits through the app's
// own fetch handler (no sockets, no load generator on the cores), 64 requests in flight, every
// commit with a sampled traceparent, NORMAL durability; between blocks of commits the hooks are
// switched off (tracingBenchSwitch: they call straight through, as with tracing off) and on:
// A, B, B, A, … Each block's CPU time per commit (the whole process, and the main thread alone)
// is one sample; the report gives the medians and the median of the pairs' ratios.
//   bun bench/probe/tracing-cpu.ts [pairs=30] [commits=1000] [endpoint=0|1]
// With endpoint=1 each commit's event is delivered to a receiver in another process, inside
// its block (the block waits for its deliveries' spans).
import { tracingBenchSwitch } from "../../src/ops/tracing-sdk.ts";
import { BUN, inProcessOutboxd, median, startPeer, threadCpuMs } from "../lib.ts";
import { COMMIT_BODY } from "../scenarios/commit.ts";

const pairs = Number(process.argv[2] ?? 30);
const commits = Number(process.argv[3] ?? 1000);
const endpoint = process.argv[4] === "1";
const TOKEN = "bench-tracing-cpu";
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const { outboxd, stop } = await inProcessOutboxd({
  token: TOKEN,
  dispatch: endpoint,
  env: {
    OUTBOXD_SYNCHRONOUS: "NORMAL",
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_SERVICE_NAME: "outboxd-bench",
  },
});
const call = (path: string, body: string) =>
  outboxd.http.fetch(
    new Request(`http://outboxd${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        traceparent: TRACEPARENT,
      },
      body,
    }),
  );
if (endpoint) {
  const created = await call("/v1/endpoints", JSON.stringify({ url: `${receiver.url}/hook` }));
  if (created.status !== 201) throw new Error(`endpoint: ${created.status}`);
}
let next = 0;
const commit = async () => {
  const response = await call("/v1/commits", COMMIT_BODY.replaceAll("[<id>]", String(next++)));
  if (response.status !== 201)
    throw new Error(`commit answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
};
/** CPU ms per thread name over the measured blocks, off and on (THREADS=1 prints them per commit). */
const byThread = { off: {} as Record<string, number>, on: {} as Record<string, number> };
let measuredCommits = 0;

const block = async (count: number) => {
  const each = Math.ceil(count / 64);
  const threadsBefore = threadCpuMs(process.pid);
  const before = process.cpuUsage();
  const beforeThread = process.threadCpuUsage();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = 0; i < each; i++) await commit();
    }),
  );
  // The block's deliveries (and their spans) are its own cost.
  if (endpoint) await Bun.sleep(250);
  const used = process.cpuUsage(before);
  const thread = process.threadCpuUsage(beforeThread);
  const n = each * 64;
  const sums = tracingBenchSwitch.off ? byThread.off : byThread.on;
  for (const [name, ms] of Object.entries(threadCpuMs(process.pid)))
    sums[name] = (sums[name] ?? 0) + ms - (threadsBefore[name] ?? 0);
  return { all: (used.user + used.system) / n, main: (thread.user + thread.system) / n };
};
const samples = {
  off: { all: [] as number[], main: [] as number[] },
  on: { all: [] as number[], main: [] as number[] },
};
try {
  // Warm-up of both: JIT, prepared statements, page cache.
  for (let i = 0; i < 4; i++) {
    tracingBenchSwitch.off = i % 2 === 0;
    await block(2000);
  }
  byThread.off = {};
  byThread.on = {};
  for (let i = 0; i < pairs; i++) {
    for (const off of i % 2 === 0 ? [true, false] : [false, true]) {
      // ONLY=on|off: every block the same way (for a CPU profile of one side).
      tracingBenchSwitch.off = process.env.ONLY ? process.env.ONLY === "off" : off;
      const us = await block(commits);
      if (!off) measuredCommits += Math.ceil(commits / 64) * 64;
      const side = off ? samples.off : samples.on;
      side.all.push(us.all);
      side.main.push(us.main);
    }
  }
} finally {
  tracingBenchSwitch.off = false;
  await stop();
  await receiver.stop();
  await sink.stop();
}
const ratio = (on: number[], off: number[]) => median(on.map((x, i) => x / (off[i] ?? x))) - 1;
const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;
console.log(
  JSON.stringify({
    pairs,
    commits,
    endpoint,
    cpuMicrosPerCommit: { off: +median(samples.off.all).toFixed(1), on: +median(samples.on.all).toFixed(1) },
    added: pct(ratio(samples.on.all, samples.off.all)),
    mainThreadMicrosPerCommit: {
      off: +median(samples.off.main).toFixed(1),
      on: +median(samples.on.main).toFixed(1),
    },
    mainThreadAdded: pct(ratio(samples.on.main, samples.off.main)),
  }),
);
if (process.env.THREADS) {
  for (const side of ["off", "on"] as const) {
    const perCommit = Object.entries(byThread[side])
      .filter(([, ms]) => ms > 0)
      .map(([thread, ms]) => `${thread} ${((ms * 1000) / Math.max(1, measuredCommits)).toFixed(1)}`)
      .join(", ");
    console.error(`${side}: CPU µs per commit by thread: ${perCommit}`);
  }
}
