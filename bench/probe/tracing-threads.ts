// What one span costs each thread of the process (issue 18), without HTTP or SQLite: the commit
// hook (tracing.commit around trivial work, one outboxd.commit span each) at a paced rate,
// blocks alternated in one process: tracing off, this checkout's tracing and, with ROOT_B, another
// checkout's. A span's cost is not only the main thread's: the garbage it leaves keeps JSC's
// block warm-up thread (JSCWarmUp), mimalloc's scavenger and the collector's helpers busy, and
// on a 2-core machine under load that CPU is taken from the commits. Exports go to an OTLP sink
// in another process. Prints, per span, the medians of each variant's CPU over "off", by thread
// (/proc schedstat, ns).
//   bun bench/probe/tracing-threads.ts [rounds=8] [spans=20000]
//   ROOT_B=/path/to/other/checkout bun bench/probe/tracing-threads.ts
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { NO_TRACING, type Tracing, type TracingSettings } from "../../src/ops/tracing.ts";
import { otelTracing } from "../../src/ops/tracing-sdk.ts";
import { BUN, median, startPeer } from "../lib.ts";

const rounds = Number(process.argv[2] ?? 8);
const spans = Number(process.argv[3] ?? 20_000);
const RATE = 5000; // spans/s: what a loaded server's commits make, well within the exporter's pace
const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const settings: TracingSettings = {
  tracesUrl: `${sink.url}/v1/traces`,
  serviceName: "threads",
  protocol: "http/protobuf",
};
const variants: Record<string, Tracing> = { off: NO_TRACING, a: otelTracing(settings, () => {}) };
if (process.env.ROOT_B) {
  const other = await import(join(process.env.ROOT_B, "src/ops/tracing-sdk.ts"));
  variants.b = other.otelTracing(settings, () => {}) as Tracing;
}
const names = Object.keys(variants);

/** CPU µs so far by thread name (/proc/self/task/*: schedstat's ns, not stat's 10 ms ticks). */
function threads(): Record<string, number> {
  const byName: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, "utf8");
      const runtime = Number(
        readFileSync(`/proc/${process.pid}/task/${tid}/schedstat`, "utf8").split(" ")[0],
      );
      const name =
        tid === String(process.pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      byName[name] = (byName[name] ?? 0) + runtime / 1000;
    } catch {
      // the thread ended since the listing
    }
  }
  return byName;
}

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const describe = () => ({ "outboxd.commit_id": "cmt_000mx5a39id1dbf755beddd5a6eb951", "outboxd.events": 1 });
const work = async (traceparent: string | undefined) => traceparent;
async function block(name: string): Promise<Record<string, number>> {
  const tracing = variants[name] as Tracing;
  const before = threads();
  const startedAt = performance.now();
  for (let i = 0; i < spans; i++) {
    await tracing.commit(parent, work, describe);
    if (i % 50 === 49) await Bun.sleep(Math.max(0, startedAt + ((i + 1) * 1000) / RATE - performance.now()));
  }
  const after = threads();
  const perSpan: Record<string, number> = {};
  for (const [thread, us] of Object.entries(after)) perSpan[thread] = (us - (before[thread] ?? 0)) / spans;
  return perSpan;
}

const samples: Record<string, Record<string, number>[]> = Object.fromEntries(names.map((n) => [n, []]));
try {
  for (const name of names) await block(name); // warm-up
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...names].reverse() : names;
    for (const name of order) samples[name]?.push(await block(name));
  }
} finally {
  for (const tracing of Object.values(variants)) await tracing.shutdown();
  await sink.stop();
}
const off = samples.off as Record<string, number>[];
const added = (name: string, pick: (s: Record<string, number>) => number) =>
  median((samples[name] ?? []).map((s, i) => pick(s) - pick(off[i] ?? {})));
const total = (s: Record<string, number>) => Object.values(s).reduce((sum, us) => sum + us, 0);
console.log(`µs per span over tracing off, medians of ${rounds} rounds × ${spans} spans at ${RATE}/s:`);
for (const name of names.filter((n) => n !== "off")) {
  const threadNames = [...new Set((samples[name] ?? []).flatMap((s) => Object.keys(s)))];
  const byThread = threadNames
    .map((thread) => [thread, added(name, (s) => s[thread] ?? 0)] as const)
    .filter(([, us]) => Math.abs(us) >= 0.05)
    .map(([thread, us]) => `${thread} ${us.toFixed(2)}`)
    .join(", ");
  const label = name === "a" ? "this checkout" : `ROOT_B (${process.env.ROOT_B})`;
  console.log(`${label}: all threads ${added(name, total).toFixed(2)} (${byThread})`);
}
