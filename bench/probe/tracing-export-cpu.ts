// What spans cost every thread, by export encoding (issue 18): three Hono apps in one process,
// each request a server span and an outboxd.commit span around trivial work (as
// tracing-middleware.ts), blocks alternated: none (tracing off), protobuf (OTLP's default) and
// json (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), spans exported to an OTLP sink in another
// process, at a paced RATE=2,500 requests/s (5,000 spans/s, which the
// standard queue of 2,048 spans keeps up with; flat out, it would drop spans). A block ends once
// the sink has counted its spans, so its export (the worker, its HTTP client, the allocator's
// scavenger) falls inside it. Prints, per request, the medians of each
// variant's CPU added over "none": the main thread, this process's other threads, and the
// sink (what a collector on the same machine would spend); and the bytes exported per span.
//   bun bench/probe/tracing-export-cpu.ts [rounds=10] [requests=10000]

import { readdirSync, readFileSync } from "node:fs";
import { Hono } from "hono";
import { requestLog } from "../../src/http/request-log.ts";
import { createLogger } from "../../src/ops/log.ts";
import { NO_TRACING, type OtlpProtocol, startTracing, type Tracing } from "../../src/ops/tracing.ts";
import { BUN, median, startPeer, waitUntil } from "../lib.ts";

const RATE = Number(process.env.RATE ?? 2500);
const rounds = Number(process.argv[2] ?? 10);

/** CPU µs of each thread of `pid` so far, by thread id, with its name: /proc's schedstat, in ns (ticks are 10 ms). */
function threadsMicros(pid: number): Record<string, { name: string; us: number }> {
  const threads: Record<string, { name: string; us: number }> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const runtime = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0];
      const name = tid === String(pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      threads[tid] = { name, us: Number(runtime) / 1000 };
    } catch {
      // the thread ended since the listing
    }
  }
  return threads;
}
const processMicros = (pid: number) =>
  Object.values(threadsMicros(pid)).reduce((sum, thread) => sum + thread.us, 0);
const requests = Number(process.argv[3] ?? 10_000);
process.env.OTEL_BSP_SCHEDULE_DELAY = "50"; // a block's last partial batch goes at once
const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const counted = async () =>
  (await (await fetch(`${sink.url}/count`)).json()) as { spans: number; bytes: number };
const traced = (protocol: OtlpProtocol) =>
  startTracing(
    { tracesUrl: `${sink.url}/v1/traces`, serviceName: "export-cpu", protocol },
    (message, fields) => console.error(protocol, message, JSON.stringify(fields)),
  );
let dropped = 0;
const outcome = {
  result: { commitId: "cmt_000mx5a39id1dbf755beddd5a6eb951", events: [{}] },
  deliveries: 0,
  replayed: false,
};
const logger = createLogger("warn", () => {});
/** outboxd's first middleware (the server span) and a route that makes one outboxd.commit span. */
function makeApp(tracing: Tracing) {
  const app = new Hono();
  app.use(requestLog(logger, tracing));
  app.post("/v1/commits", async (c) => {
    const parent = tracing.requestTraceparent(c.req.raw);
    if (tracing.enabled) tracing.commitEnded(tracing.commitBegun(parent), outcome);
    return c.json({ ok: true }, 201);
  });
  return { app, tracing };
}
const variants = {
  none: makeApp(NO_TRACING),
  protobuf: makeApp(await traced("http/protobuf")),
  json: makeApp(await traced("http/json")),
};
type Name = keyof typeof variants;
const names = Object.keys(variants) as Name[];
const headers = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };
const garbage: unknown[] = [];

interface Sample {
  main: number;
  others: number;
  sink: number;
  bytesPerSpan: number;
  byThread: Record<string, number>;
}
async function block(name: Name): Promise<Sample> {
  const { app, tracing } = variants[name];
  const before = { tasks: threadsMicros(process.pid), sink: processMicros(sink.pid), count: await counted() };
  const startedAt = performance.now();
  for (let i = 0; i < requests; i++) {
    await app.fetch(new Request("http://outboxd/v1/commits", { method: "POST", headers }));
    // A little garbage, as a server makes around each request.
    for (let k = 0; k < 30; k++) garbage[(i * 30 + k) % 20000] = { i, k };
    if (i % 50 === 49) {
      const due = startedAt + ((i + 1) * 1000) / RATE;
      await Bun.sleep(Math.max(0, due - performance.now()));
    }
  }
  const spans = tracing.enabled ? 2 * requests : 0;
  // Until the sink has them all, or (spans dropped on a busy machine: counted below) nothing more comes for 1 s.
  let last = -1;
  let still = 0;
  await waitUntil(
    `${name}: the sink counts the block's spans`,
    async () => {
      const now = (await counted()).spans;
      still = now === last ? still + 1 : 0;
      last = now;
      return now >= before.count.spans + spans || still >= 50;
    },
    60_000,
  );
  dropped += before.count.spans + spans - last;
  const after = { tasks: threadsMicros(process.pid), sink: processMicros(sink.pid), count: await counted() };
  const byThread: Record<string, number> = {};
  for (const [tid, task] of Object.entries(after.tasks)) {
    const us = task.us - (before.tasks[tid]?.us ?? 0);
    byThread[task.name] = (byThread[task.name] ?? 0) + us / requests;
  }
  const main = byThread.main ?? 0;
  const all = Object.values(byThread).reduce((sum, us) => sum + us, 0);
  return {
    main,
    others: all - main,
    sink: (after.sink - before.sink) / requests,
    bytesPerSpan:
      spans > 0 ? (after.count.bytes - before.count.bytes) / (after.count.spans - before.count.spans) : 0,
    byThread,
  };
}

const samples: Record<Name, Sample[]> = { none: [], protobuf: [], json: [] };
try {
  for (const name of names) await block(name); // warm-up
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...names].reverse() : names;
    for (const name of order) samples[name].push(await block(name));
  }
} finally {
  for (const { tracing } of Object.values(variants)) await tracing.shutdown();
  await sink.stop();
}
/** Median over rounds of `pick` of the variant minus that of "none" in the same round. */
const added = (name: Name, pick: (s: Sample) => number) =>
  median(samples[name].map((s, i) => pick(s) - pick(samples.none[i] as Sample))).toFixed(2);
const threads = (name: Name) => {
  const keys = new Set(samples[name].flatMap((s) => Object.keys(s.byThread)));
  return [...keys]
    .filter((k) => k !== "main")
    .map((k) => `${k} ${added(name, (s) => s.byThread[k] ?? 0)}`)
    .join(", ");
};
console.log(`µs per request (two spans) added over tracing off, medians of ${rounds} rounds × ${requests}:`);
for (const name of ["protobuf", "json"] as const) {
  console.log(
    `${name}: main ${added(name, (s) => s.main)}, other threads ${added(name, (s) => s.others)} (${threads(name)}), ` +
      `sink ${added(name, (s) => s.sink)}; ${median(samples[name].map((s) => s.bytesPerSpan)).toFixed(0)} bytes per span`,
  );
}
console.log(
  `(none: main ${median(samples.none.map((s) => s.main)).toFixed(2)} µs per request; spans dropped: ${dropped})`,
);
