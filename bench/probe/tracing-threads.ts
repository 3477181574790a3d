// What one span costs each thread of the process, without SQLite or sockets for the
// commits: at a paced rate, blocks alternated in one process: tracing off, this checkout's
// tracing and, with ROOT_B, another checkout's. Two modes:
//   commit   the commit hook as the commit service calls it, around trivial work (one
//            outboxd.commit span each);
//   request  a Hono app with outboxd's first middleware (src/http/request-log.ts, the server span)
//            and a route that runs the commit hook, driven through app.fetch (two spans each,
//            as a commit over HTTP makes).
// A span's cost is not only the main thread's: the garbage it leaves keeps JSC's block warm-up
// thread (JSCWarmUp), mimalloc's scavenger and the collector's helpers busy, and on a 2-core
// machine under load that CPU is taken from the commits. Exports go to an OTLP sink in another
// process. Prints, per commit, the medians of each variant's CPU over "off", by thread
// (/proc schedstat, ns). ROOT_B may hold an older checkout's hooks (commit(parent, run)).
//   bun bench/probe/tracing-threads.ts [rounds=8] [spans=20000] [commit|request]
//   ROOT_B=/path/to/other/checkout bun bench/probe/tracing-threads.ts
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Hono, type MiddlewareHandler } from "hono";
import { requestLog } from "../../src/http/request-log.ts";
import { createLogger } from "../../src/ops/log.ts";
import {
  type CommitSummary,
  NO_TRACING,
  type TraceParent,
  type Tracing,
  type TracingSettings,
} from "../../src/ops/tracing.ts";
import { otelTracing } from "../../src/ops/tracing-sdk.ts";
import { BUN, median, startPeer } from "../lib.ts";

const rounds = Number(process.argv[2] ?? 8);
const spans = Number(process.argv[3] ?? 20_000);
const mode = process.argv[4] === "request" ? "request" : "commit";
const RATE = 5000; // commits/s: what a loaded server makes, well within the exporter's pace
const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const settings: TracingSettings = {
  tracesUrl: `${sink.url}/v1/traces`,
  serviceName: "threads",
  protocol: "http/protobuf",
};
const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const outcome: CommitSummary = {
  result: { commitId: "cmt_000mx5a39id1dbf755beddd5a6eb951", events: [{}] },
  deliveries: 0,
  replayed: false,
};
const work = async (traceparent: TraceParent | undefined) => traceparent;

/** The commit hook as src/commit/service.ts calls it: untraced when off, else one outboxd.commit span. */
function commit(tracing: Tracing, traceparent: TraceParent | undefined): Promise<unknown> {
  return tracing.enabled ? traced(tracing, traceparent) : work(traceparent);
}
async function traced(tracing: Tracing, traceparent: TraceParent | undefined) {
  const span = tracing.commitBegun(traceparent);
  try {
    const answer = await work(span.traceparent);
    tracing.commitEnded(span, outcome);
    return answer;
  } catch (error) {
    tracing.commitFailed(span, error);
    throw error;
  }
}

/** An older checkout's hooks: callbacks, and a middleware of their own. */
interface OldHooks {
  middleware(): MiddlewareHandler | null;
  commit(parent: TraceParent | undefined, run: typeof work, describe: () => object): Promise<unknown>;
}
const describe = () => ({
  "outboxd.commit_id": outcome.result.commitId,
  "outboxd.events": outcome.result.events.length,
  "outboxd.deliveries": outcome.deliveries,
  "outboxd.replayed": outcome.replayed,
});

/** One commit (mode commit) or one request making one (mode request) with `tracing`. */
function variant(
  tracing: Tracing,
  firstMiddleware: MiddlewareHandler[],
  oneCommit: (tp: TraceParent | undefined) => Promise<unknown>,
) {
  if (mode === "commit") return () => oneCommit(parent);
  const app = new Hono();
  for (const middleware of firstMiddleware) app.use(middleware);
  app.post("/v1/commits", async (c) => {
    await oneCommit(tracing.requestTraceparent(c.req.raw));
    return c.json({ ok: true }, 201);
  });
  const init = { method: "POST", headers: { traceparent: parent } };
  return async () => app.fetch(new Request("http://outboxd/v1/commits", init));
}

const logger = createLogger("warn", () => {});
const tracings: Tracing[] = [otelTracing(settings, () => {})];
const variants: Record<string, () => Promise<unknown>> = {
  off: variant(NO_TRACING, [requestLog(logger, NO_TRACING)], (tp) => commit(NO_TRACING, tp)),
};
variants.a = variant(tracings[0] as Tracing, [requestLog(logger, tracings[0] as Tracing)], (tp) =>
  commit(tracings[0] as Tracing, tp),
);
if (process.env.ROOT_B) {
  const sdk = await import(join(process.env.ROOT_B, "src/ops/tracing-sdk.ts"));
  const log = await import(join(process.env.ROOT_B, "src/http/request-log.ts"));
  const other = sdk.otelTracing(settings, () => {}) as Tracing | (Tracing & OldHooks);
  tracings.push(other);
  variants.b = !("middleware" in other)
    ? variant(other, [log.requestLog(logger, other)], (tp) => commit(other, tp))
    : variant(
        other,
        [other.middleware(), log.requestLog(logger)].filter((m) => m !== null),
        (tp) => other.commit(tp, work, describe),
      );
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

async function block(name: string): Promise<Record<string, number>> {
  const once = variants[name] as () => Promise<unknown>;
  const before = threads();
  const startedAt = performance.now();
  for (let i = 0; i < spans; i++) {
    await once();
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
  for (const tracing of tracings) await tracing.shutdown();
  await sink.stop();
}
const off = samples.off as Record<string, number>[];
const added = (name: string, pick: (s: Record<string, number>) => number) =>
  median((samples[name] ?? []).map((s, i) => pick(s) - pick(off[i] ?? {})));
const total = (s: Record<string, number>) => Object.values(s).reduce((sum, us) => sum + us, 0);
console.log(
  `${mode}: µs per commit over tracing off, medians of ${rounds} rounds × ${spans} commits at ${RATE}/s:`,
);
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
