// Tracing cost (on ≤ 5% of commit throughput, off nothing measurable), three ways in
// one run, each with its noise floor beside it. By default every commit carries a sampled
// traceparent (a caller that traces), so with tracing on each one records a server span and an
// outboxd.commit span, and with an endpoint each delivery an outboxd.deliver span; with
// OTEL_TRACES_SAMPLER_ARG set (a ratio sampler) the load sends none and each commit starts a
// trace of its own, so the ratio applies; spans go over OTLP/HTTP to a
// receiver in another process (bench/peers/otlp-sink.ts). Durability is NORMAL: without an fsync
// per commit group the commit path is CPU-bound, where what tracing adds shows most.
//
// 1. The issue's figure, in one server: outboxd with tracing on, under one continuous load of 64
//    connections, its spans switched off and on in short blocks (bench/probe/tracing-switch.ts):
//    off, on, off again, in each of their six orders in turn, round after round. Both sides share the heap, the
//    JIT's work, the database and the machine's minute, so what differs is tracing; "off again"
//    against "off" is the noise floor, measured the same way in the same run. Each block gives
//    commits/s (wall clock) and CPU per commit (whole process and main thread: figures that do
//    not depend on how long the server waited for a core). Off, the switched tracing says it is
//    not enabled, so every caller takes its untraced path, as with tracing off.
// 2. Separate servers (off, on, off again), loaded in turn round after round: what a user sees
//    between two deployments, also the loaded SDK modules, but with the
//    differences between two processes (heap layout, JIT luck) in its noise floor.
// 3. Off against no hooks at all: what tracing off adds per commit and per delivery (the
//    callers' tests of Tracing.enabled), in this process, set against a commit's CPU from 1.
// Costs are medians of the rounds' paired ratios with a ~95% interval (median ± 1.58·IQR/√n).
//   npx bun bench/scenarios/tracing.ts [--quick]     (alone; npm run bench runs it too)
import { join } from "node:path";
import { NO_TRACING, type Tracing, validTraceparent } from "../../src/ops/tracing.ts";
import {
  BUN,
  freePort,
  median,
  REPO,
  type Running,
  saturate,
  startOutboxd,
  startPeer,
  TOKEN,
} from "../lib.ts";
import { COMMIT_BODY } from "./commit.ts";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
/** One trace id for every commit unless a ratio sampler is asked for (see tracingScenario). */
const LOAD_HEADERS: Record<string, string> =
  process.env.OTEL_TRACES_SAMPLER_ARG === undefined
    ? { authorization: `Bearer ${TOKEN}`, traceparent: TRACEPARENT }
    : { authorization: `Bearer ${TOKEN}` };
const VARIANTS = ["off", "on", "off (again)"] as const;
type Variant = (typeof VARIANTS)[number];
type PerVariant = Record<Variant, number>;

/** A median of per-round ratios, minus 1, with its ~95% interval (all as fractions). */
export interface Ratio {
  median: number;
  low: number;
  high: number;
}

/** One measurement (one way, one endpoint setting): each variant's medians and the costs. */
export interface TracingRow {
  endpoint: boolean;
  rounds: number;
  commitsPerSecond: PerVariant;
  cpuMicrosPerCommit: PerVariant;
  /** The server's main thread alone (JavaScript, SQLite, HTTP, the span exports; no GC helpers or JIT). */
  mainThreadMicrosPerCommit: PerVariant;
  /** 1 - on/off of commits/s: the share of commit throughput tracing costs. */
  throughputCost: Ratio;
  /** 1 - (off again)/off: the noise floor of that figure. */
  throughputNoise: Ratio;
  /** on/off - 1 of CPU per commit, and its noise floor. */
  cpuAdded: Ratio;
  cpuNoise: Ratio;
  mainThreadAdded: Ratio;
  mainThreadNoise: Ratio;
  spansExported: number;
  /** Where the CPU went: µs per commit by thread name over all blocks, off and on (10 ms ticks). */
  byThread: Record<string, { off: number; on: number }>;
  /**
   * CPU per commit over all of a variant's blocks together (total CPU / total commits), as
   * on/off - 1 and (off again)/off - 1: less swayed by single blocks than the median of ratios.
   */
  totals: { cpuAdded: number; cpuNoise: number; mainThreadAdded: number; mainThreadNoise: number };
}

/** What tracing off (NO_TRACING) adds, against calling the same work without tracing. */
export interface OffPathCost {
  /** ns per commit: the caller's traceparent checked, and the commit service's test of `enabled`. */
  commitNs: number;
  /** ns per delivery attempt: the dispatcher's test of `enabled` and choice of the context sent. */
  deliverNs: number;
  /** commitNs + deliverNs against the CPU per commit of tracing off measured in this run (1, with an endpoint). */
  shareOfCommit: number;
}

export interface TracingResult {
  /** 1: one server, spans switched on and off in alternating blocks (the issue's figure). */
  toggled: TracingRow[];
  /** 2: separate servers, off, on and off again. */
  rows: TracingRow[];
  /** 3: the off hooks against none. */
  offPath: OffPathCost;
}

export async function tracingScenario(options: {
  /** Rounds of the one-server measurement (three blocks each). */
  toggledRounds: number;
  /** Length of one block (both measurements). */
  blockMs: number;
  /** Rounds of the separate-servers measurement (three blocks each). */
  separateRounds: number;
  receiverUrl: string;
}): Promise<TracingResult> {
  const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
  // Every commit the load sends carries a sampled traceparent, so the default (parent-based)
  // sampler records them all: the cost of tracing everything. OTEL_TRACES_SAMPLER and
  // OTEL_TRACES_SAMPLER_ARG in the bench's environment pass through, e.g. `traceidratio` and
  // 0.1 for the cost of sampling a tenth; the load then sends no traceparent (LOAD_HEADERS), so
  // each commit starts a trace of its own and the ratio applies to it.
  const sampler = Object.fromEntries(
    ["OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"].flatMap((key) => {
      const value = process.env[key];
      return value === undefined ? [] : [[key, value]];
    }),
  );
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "outboxd-bench", ...sampler };
  const spansAtSink = async () =>
    ((await (await fetch(`${sink.url}/count`)).json()) as { spans: number }).spans;
  const toggled: TracingRow[] = [];
  const rows: TracingRow[] = [];
  try {
    for (const endpoint of [false, true]) {
      toggled.push(await oneServer(endpoint, traced, spansAtSink, options));
      log("one server, spans switched", toggled.at(-1) as TracingRow);
    }
    for (const endpoint of [false, true]) {
      rows.push(await separateServers(endpoint, traced, spansAtSink, options));
      log("separate servers", rows.at(-1) as TracingRow);
    }
  } finally {
    await sink.stop();
  }
  const offServer = toggled.find((row) => row.endpoint) ?? toggled[0];
  return { toggled, rows, offPath: await offPathCost(offServer?.cpuMicrosPerCommit.off ?? Number.NaN) };
}

/** One block's figures. */
interface Sample {
  commitsPerSecond: number;
  cpuMicrosPerCommit: number;
  mainThreadMicrosPerCommit: number;
  commits: number;
  /** CPU ms of the block by thread name. */
  threadsMs: Record<string, number>;
}

/** A server to load in a block, its switch listener, and the switch position (one server only). */
interface Target {
  server: Running;
  switchPort: number;
  tracing?: "on" | "off";
}

/** outboxd serve with bench/probe/tracing-switch.ts preloaded (CPU snapshots; the switch when tracing is on). */
async function startSwitchable(env: Record<string, string>): Promise<Target> {
  const switchPort = await freePort();
  const server = await startOutboxd(
    { OUTBOXD_SYNCHRONOUS: "NORMAL", ...env, TRACING_SWITCH_PORT: String(switchPort) },
    "serve",
    undefined,
    ["--preload", join(REPO, "bench/probe/tracing-switch.ts")],
  );
  return { server, switchPort };
}

/** A server's CPU so far (µs), from its switch listener, after switching its spans if asked. */
async function snapshot(target: Target, tracing?: "on" | "off") {
  const query = tracing ? `?tracing=${tracing}` : "";
  const response = await fetch(`http://127.0.0.1:${target.switchPort}/${query}`);
  return (await response.json()) as {
    cpuMicros: number;
    mainThreadMicros: number;
    tasks: Record<string, { name: string; ms: number }>;
  };
}

/**
 * Rounds of one block per variant, in balanced orders, under a closed-loop load of 64
 * connections that moves to the block's server (separate servers) or stays on the one server
 * whose spans are switched. Each block: switch, let the requests in flight be answered, then
 * count the commits answered and the server's CPU over `blockMs`.
 */
async function measureBlocks(
  targets: Record<Variant, Target>,
  options: { rounds: number; blockMs: number },
): Promise<Record<Variant, Sample[]>> {
  const samples: Record<Variant, Sample[]> = { off: [], on: [], "off (again)": [] };
  let traffic: ReturnType<typeof saturate> | null = null;
  let loaded: Running | null = null;
  const block = async (variant: Variant, record: boolean) => {
    const target = targets[variant];
    if (target.tracing) await snapshot(target, target.tracing);
    if (loaded !== target.server) {
      await traffic?.stop();
      traffic = saturate({
        url: `${target.server.url}/v1/commits`,
        connections: 64,
        body: COMMIT_BODY,
        headers: LOAD_HEADERS,
      });
      loaded = target.server;
    }
    const load: ReturnType<typeof saturate> = traffic as unknown as ReturnType<typeof saturate>;
    // The requests in flight when the switch flipped (or the load moved) are answered first.
    await Bun.sleep(150);
    const before = await snapshot(target);
    const answeredBefore = load.answered();
    const startedAt = performance.now();
    await Bun.sleep(options.blockMs);
    const after = await snapshot(target);
    const commits = Math.max(1, load.answered() - answeredBefore);
    if (!record) return;
    samples[variant].push({
      commitsPerSecond: (commits * 1000) / (performance.now() - startedAt),
      cpuMicrosPerCommit: (after.cpuMicros - before.cpuMicros) / commits,
      mainThreadMicrosPerCommit: (after.mainThreadMicros - before.mainThreadMicros) / commits,
      commits,
      threadsMs: byName(before.tasks, after.tasks),
    });
  };
  try {
    // Warm-up, ~4 s of each variant (each server, or each switch position): the code compiled
    // by the JIT's top tier, statements prepared, the page cache filled. On the shared machine
    // the JIT was still a large share of CPU per commit in the rounds (more with tracing on:
    // more code to compile, and less optimised code on the main thread meanwhile); a server
    // that runs for hours pays that once.
    for (const variant of VARIANTS) for (let i = 0; i < 5; i++) await block(variant, false);
    for (let round = 0; round < options.rounds; round++) {
      for (const variant of ordered(round)) await block(variant, true);
    }
  } finally {
    const last = traffic as ReturnType<typeof saturate> | null;
    await last?.stop();
    if (last && last.failed() > 0) console.error(`tracing: ${last.failed()} commits failed`);
  }
  return samples;
}

async function oneServer(
  endpoint: boolean,
  traced: Record<string, string>,
  spansAtSink: () => Promise<number>,
  options: { toggledRounds: number; blockMs: number; receiverUrl: string },
): Promise<TracingRow> {
  const target = await startSwitchable(traced);
  try {
    if (endpoint) await target.server.api("POST", "/v1/endpoints", { url: options.receiverUrl });
    const spansBefore = await spansAtSink();
    const samples = await measureBlocks(
      {
        off: { ...target, tracing: "off" },
        on: { ...target, tracing: "on" },
        "off (again)": { ...target, tracing: "off" },
      },
      { rounds: options.toggledRounds, blockMs: options.blockMs },
    );
    return summarize(endpoint, samples, (await spansAtSink()) - spansBefore);
  } finally {
    await target.server.stop();
  }
}

async function separateServers(
  endpoint: boolean,
  traced: Record<string, string>,
  spansAtSink: () => Promise<number>,
  options: { separateRounds: number; blockMs: number; receiverUrl: string },
): Promise<TracingRow> {
  const started: Target[] = [];
  const start = async (env: Record<string, string>) => {
    const target = await startSwitchable(env);
    started.push(target);
    return target;
  };
  try {
    // One after another, inside the try: a server that fails to start leaves none running.
    const targets: Record<Variant, Target> = {
      off: await start({}),
      on: await start(traced),
      "off (again)": await start({}),
    };
    if (endpoint) {
      for (const { server } of Object.values(targets)) {
        await server.api("POST", "/v1/endpoints", { url: options.receiverUrl });
      }
    }
    const spansBefore = await spansAtSink();
    const samples = await measureBlocks(targets, {
      rounds: options.separateRounds,
      blockMs: options.blockMs,
    });
    return summarize(endpoint, samples, (await spansAtSink()) - spansBefore);
  } finally {
    for (const { server } of started) await server.stop();
  }
}

/** CPU ms between two readings by thread name (threads started meanwhile count whole; ended ones are gone). */
function byName(
  before: Record<string, { name: string; ms: number }>,
  after: Record<string, { name: string; ms: number }>,
): Record<string, number> {
  const ms: Record<string, number> = {};
  for (const [tid, task] of Object.entries(after)) {
    ms[task.name] = (ms[task.name] ?? 0) + task.ms - (before[tid]?.ms ?? 0);
  }
  return ms;
}

/**
 * The variants' order in a round: the six orders in turn, so that each variant comes first,
 * second and last equally often and follows each other one equally often (what one block
 * leaves to the next, such as garbage or a batch still being exported, falls on all alike).
 */
function ordered(round: number): Variant[] {
  const [a, b, c] = VARIANTS;
  const orders: Variant[][] = [
    [a, b, c],
    [b, c, a],
    [c, a, b],
    [a, c, b],
    [c, b, a],
    [b, a, c],
  ];
  return orders[round % orders.length] as Variant[];
}

function summarize(endpoint: boolean, samples: Record<Variant, Sample[]>, spansExported: number): TracingRow {
  const medians = (pick: (s: Sample) => number): PerVariant => ({
    off: round1(median(samples.off.map(pick))),
    on: round1(median(samples.on.map(pick))),
    "off (again)": round1(median(samples["off (again)"].map(pick))),
  });
  /** Each round's `variant`/off ratio of `pick`, minus 1 (negated: the share lost). */
  const paired = (variant: Variant, pick: (s: Sample) => number, lost = false): Ratio => {
    const ratios = samples[variant].map((s, i) => {
      const off = samples.off[i];
      const r = off ? pick(s) / pick(off) - 1 : 0;
      return lost ? -r : r;
    });
    return medianInterval(ratios);
  };
  const rate = (s: Sample) => s.commitsPerSecond;
  const cpu = (s: Sample) => s.cpuMicrosPerCommit;
  const main = (s: Sample) => s.mainThreadMicrosPerCommit;
  return {
    endpoint,
    rounds: samples.off.length,
    commitsPerSecond: medians(rate),
    cpuMicrosPerCommit: medians(cpu),
    mainThreadMicrosPerCommit: medians(main),
    throughputCost: paired("on", rate, true),
    throughputNoise: paired("off (again)", rate, true),
    cpuAdded: paired("on", cpu),
    cpuNoise: paired("off (again)", cpu),
    mainThreadAdded: paired("on", main),
    mainThreadNoise: paired("off (again)", main),
    spansExported,
    byThread: byThread(samples),
    totals: totals(samples),
  };
}

function totals(samples: Record<Variant, Sample[]>): TracingRow["totals"] {
  const perCommit = (variant: Variant, pick: (s: Sample) => number) => {
    const blocks = samples[variant];
    const commits = blocks.reduce((sum, s) => sum + s.commits, 0);
    return blocks.reduce((sum, s) => sum + pick(s) * s.commits, 0) / Math.max(1, commits);
  };
  const ratio = (variant: Variant, pick: (s: Sample) => number) =>
    round4(perCommit(variant, pick) / perCommit("off", pick) - 1);
  const cpu = (s: Sample) => s.cpuMicrosPerCommit;
  const main = (s: Sample) => s.mainThreadMicrosPerCommit;
  return {
    cpuAdded: ratio("on", cpu),
    cpuNoise: ratio("off (again)", cpu),
    mainThreadAdded: ratio("on", main),
    mainThreadNoise: ratio("off (again)", main),
  };
}

/** CPU µs per commit by thread name, over all of a variant's blocks (off: both off variants). */
function byThread(samples: Record<Variant, Sample[]>): Record<string, { off: number; on: number }> {
  const perCommit = (blocks: Sample[]) => {
    const commits = blocks.reduce((sum, s) => sum + s.commits, 0);
    const ms: Record<string, number> = {};
    for (const s of blocks)
      for (const [name, t] of Object.entries(s.threadsMs)) ms[name] = (ms[name] ?? 0) + t;
    return Object.fromEntries(
      Object.entries(ms).map(([name, t]) => [name, (t * 1000) / Math.max(1, commits)]),
    );
  };
  const off = perCommit([...samples.off, ...samples["off (again)"]]);
  const on = perCommit(samples.on);
  const names = [...new Set([...Object.keys(off), ...Object.keys(on)])];
  return Object.fromEntries(
    names
      .map((name) => [name, { off: round1(off[name] ?? 0), on: round1(on[name] ?? 0) }] as const)
      .filter(([, v]) => v.off >= 0.1 || v.on >= 0.1),
  );
}

/** The median and its ~95% interval, median ± 1.58·IQR/√n (the notch of a box plot). */
function medianInterval(values: number[]): Ratio {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const m = median(sorted);
  const half = (1.58 * (at(0.75) - at(0.25))) / Math.sqrt(Math.max(1, sorted.length));
  return { median: round4(m), low: round4(m - half), high: round4(m + half) };
}

/**
 * ns that tracing off adds, per commit (the caller's traceparent checked, and the commit
 * service's test of Tracing.enabled) and per delivery attempt (the dispatcher's test and the
 * context it sends), against the same async work called straight.
 */
async function offPathCost(offMicrosPerCommit: number): Promise<OffPathCost> {
  const tracing: Tracing = NO_TRACING;
  const commitWork = async (traceparent: string | undefined) => traceparent;
  const sendWork = async (_traceparent: string | null) => ({ statusCode: 200, error: null });
  const never = () => Promise.reject(new Error("tracing is off"));
  // As src/commit/service.ts and src/dispatch/dispatcher.ts call them.
  const offCommit = (traceparent: string | undefined) =>
    tracing?.enabled ? never() : commitWork(traceparent);
  const offSend = (parent: string | null) => {
    const span = tracing?.enabled ? tracing.deliverBegun(parent) : null;
    return sendWork(span === null ? parent : span.traceparent);
  };
  const calls = 500_000;
  const time = async (f: () => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await f();
    return ((performance.now() - started) * 1e6) / calls;
  };
  const commit: number[] = [];
  const deliver: number[] = [];
  for (let i = 0; i < 7; i++) {
    commit.push(
      (await time(() => offCommit(validTraceparent(TRACEPARENT)))) -
        (await time(() => commitWork(TRACEPARENT))),
    );
    deliver.push((await time(() => offSend(TRACEPARENT))) - (await time(() => sendWork(TRACEPARENT))));
  }
  const commitNs = round1(median(commit));
  const deliverNs = round1(median(deliver));
  return { commitNs, deliverNs, shareOfCommit: round4((commitNs + deliverNs) / (offMicrosPerCommit * 1000)) };
}

/** What the load sent and which sampler the servers ran, as the run's text says it. */
function loadDescription(): string {
  const sampler = process.env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on";
  const arg = process.env.OTEL_TRACES_SAMPLER_ARG;
  return arg === undefined
    ? `Every commit carries a sampled traceparent (sampler ${sampler}: every commit recorded)`
    : `No commit carries a traceparent, so each starts a trace of its own (sampler ${sampler} ${arg})`;
}

function log(what: string, row: TracingRow): void {
  const c = row.commitsPerSecond;
  console.error(
    `tracing, ${what}, ${row.endpoint ? "1 endpoint" : "no endpoint"} (${row.rounds} rounds): commits/s off ${c.off}, ` +
      `on ${c.on} (cost ${pct(row.throughputCost)}, noise ${pct(row.throughputNoise)}); CPU/commit ` +
      `${row.cpuMicrosPerCommit.off} → ${row.cpuMicrosPerCommit.on} µs (${pct(row.cpuAdded)}, noise ${pct(row.cpuNoise)}); ` +
      `main thread ${row.mainThreadMicrosPerCommit.off} → ${row.mainThreadMicrosPerCommit.on} µs ` +
      `(${pct(row.mainThreadAdded)}, noise ${pct(row.mainThreadNoise)}); totals: CPU ${signed(row.totals.cpuAdded)} ` +
      `(noise ${signed(row.totals.cpuNoise)}), main thread ${signed(row.totals.mainThreadAdded)} ` +
      `(noise ${signed(row.totals.mainThreadNoise)}); ${row.spansExported} spans exported; ` +
      `by thread, µs/commit off → on: ${Object.entries(row.byThread)
        .map(([name, v]) => `${name} ${v.off} → ${v.on}`)
        .join(", ")}`,
  );
}

/** "+4.1%": a fraction as a signed percentage. */
function signed(x: number): string {
  return `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;
}

/** "+4.1% [2.9, 5.3]": a ratio as a signed percentage with its interval. */
function pct(r: Ratio): string {
  const p = (x: number) => (x * 100).toFixed(1);
  return `${r.median >= 0 ? "+" : ""}${p(r.median)}% [${p(r.low)}, ${p(r.high)}]`;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}

export function tracingMarkdown(result: TracingResult): string[] {
  const table = (rows: TracingRow[]) => [
    "| endpoint | rounds | commits/s off | on | off again | **throughput cost of on** | noise (off again) | CPU µs/commit off | on | added | noise | main thread µs/commit off | on | added | noise | spans exported |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.endpoint ? "1, delivering" : "none"} | ${r.rounds} | ${r.commitsPerSecond.off} | ${r.commitsPerSecond.on} | ` +
        `${r.commitsPerSecond["off (again)"]} | **${pct(r.throughputCost)}** | ${pct(r.throughputNoise)} | ` +
        `${r.cpuMicrosPerCommit.off} | ${r.cpuMicrosPerCommit.on} | ${pct(r.cpuAdded)} | ${pct(r.cpuNoise)} | ` +
        `${r.mainThreadMicrosPerCommit.off} | ${r.mainThreadMicrosPerCommit.on} | ${pct(r.mainThreadAdded)} | ` +
        `${pct(r.mainThreadNoise)} | ${r.spansExported} |`,
    ),
  ];
  const threads = (title: string, rows: TracingRow[]) =>
    rows.map(
      (r) =>
        `- ${title}, ${r.endpoint ? "1 endpoint" : "no endpoint"}: ` +
        Object.entries(r.byThread)
          .sort((a, b) => b[1].on - a[1].on)
          .map(([name, v]) => `${name} ${v.off} → ${v.on}`)
          .join(", ") +
        `; all blocks together: CPU per commit ${signed(r.totals.cpuAdded)} (noise ${signed(r.totals.cpuNoise)}), ` +
        `main thread ${signed(r.totals.mainThreadAdded)} (noise ${signed(r.totals.mainThreadNoise)})`,
    );
  const off = result.offPath;
  return [
    "## Tracing cost (OpenTelemetry on and off)",
    "",
    `${loadDescription()}; spans go over OTLP/HTTP to a receiver in another process; ` +
      "64 connections, synchronous=NORMAL (CPU-bound). Costs are medians of the rounds' paired ratios, " +
      "[~95% interval]; the noise floor is off again against off, measured the same way in the same run.",
    "",
    "**One server, its spans switched on and off in alternating blocks under one continuous load** " +
      "(bench/probe/tracing-switch.ts; the same heap, JIT state and machine minute on both sides):",
    "",
    ...table(result.toggled),
    "",
    "**Separate servers** (off, on, off again), loaded in turn in blocks of the same length:",
    "",
    ...table(result.rows),
    "",
    "CPU µs per commit by thread, off → on (/proc, 10 ms ticks summed over the blocks):",
    "",
    ...threads("one server", result.toggled),
    ...threads("separate servers", result.rows),
    "",
    `**Off against no hooks**: tracing off adds ${off.commitNs} ns per commit (the caller's traceparent ` +
      `checked, the test of Tracing.enabled) and ${off.deliverNs} ns per delivery attempt (the test and ` +
      `the context chosen): ${(off.shareOfCommit * 100).toFixed(3)}% of a commit's CPU with ` +
      "tracing off measured above, far below any noise floor.",
    "",
  ];
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  try {
    const result = await tracingScenario({
      toggledRounds: quick ? 12 : 30,
      blockMs: 600,
      separateRounds: quick ? 12 : 30,
      receiverUrl: `${receiver.url}/hook`,
    });
    console.log(tracingMarkdown(result).join("\n"));
  } finally {
    await receiver.stop();
  }
}
