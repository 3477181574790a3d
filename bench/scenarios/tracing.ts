// Tracing cost (issue 18: on ≤ 5% of commit throughput, off nothing measurable). Side by side in
// one run: outboxd with tracing off, with tracing on (exporting to an OTLP sink on this machine),
// and a second off instance as the noise floor, all running at once and loaded in turn, round
// after round, so the busy machine's drift hits all three alike. Every commit carries a
// traceparent (a caller that traces), so with tracing on each one records a server span and an
// outboxd.commit span, and with an endpoint each delivery an outboxd.deliver span.
//
// The cost is the median over rounds of each round's ratio (paired: the variants of one round ran
// within seconds of each other), not a ratio of medians. Durability is NORMAL: without an fsync
// per commit group the commit path is CPU-bound, where what tracing adds shows most.
//
// On a shared, busy machine throughput swings with everyone else's load, so the server's own CPU
// time per commit (user + system, from /proc, exporter included) is measured too: it does not
// depend on how long the process waited for a core, and it is what tracing adds.
//
// "Off costs nothing" is also measured directly: the off hooks (NO_TRACING) against calling the
// same function straight, in this process, per call.
//   npx bun bench/scenarios/tracing.ts [--quick]     (alone; npm run bench runs it too)
import { readFileSync } from "node:fs";
import { NO_TRACING } from "../../src/ops/tracing.ts";
import { BUN, load, median, REPO, startOutboxd, startPeer, TOKEN } from "../lib.ts";
import { COMMIT_BODY } from "./commit.ts";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const VARIANTS = ["off", "on", "off (again)"] as const;
type Variant = (typeof VARIANTS)[number];

export interface TracingRow {
  fanout: boolean;
  connections: number;
  /** Median commits/s of each variant over the rounds, with every round's figure. */
  commitsPerSecond: Record<Variant, { median: number; runs: number[] }>;
  /** Server CPU time per commit (µs, median over rounds). */
  cpuMicrosPerCommit: Record<Variant, number>;
  /** The same for the server's main thread alone (JavaScript, SQLite, HTTP; no GC helpers or JIT). */
  mainThreadMicrosPerCommit: Record<Variant, number>;
  /** on/off - 1 of the main thread's CPU time per commit (median of the rounds' ratios). */
  onMainThreadCost: number;
  /** on/off - 1 of the CPU time per commit (median of the rounds' ratios): what tracing adds. */
  onCpuCost: number;
  /** 1 - on/off (median of the rounds' ratios): the share of commit throughput tracing costs. */
  onCost: number;
  /** 1 - off(again)/off, the same way: what two identical instances differ by (the noise floor). */
  noise: number;
  spansExported: number;
}

/** bench/probe/tracing-cpu.ts's answer: on/off blocks of commits alternated in one process. */
export interface TracingCpuResult {
  pairs: number;
  commits: number;
  endpoint: boolean;
  cpuMicrosPerCommit: { off: number; on: number };
  /** Median of the pairs' on/off ratios - 1, as a signed percentage ("+6.7%"). */
  added: string;
  mainThreadMicrosPerCommit: { off: number; on: number };
  mainThreadAdded: string;
}

export interface TracingResult {
  rows: TracingRow[];
  /** The same cost with on and off alternated in one process (no endpoint, one endpoint). */
  inProcess?: TracingCpuResult[];
  /** Nanoseconds the off hooks add per commit (NO_TRACING.commit around a call vs the call). */
  offHookNsPerCall: number;
}

export async function tracingScenario(options: {
  seconds: number;
  runs: number;
  connections: number[];
  receiverUrl: string;
  /** Pairs of on/off blocks for the one-process measurement (default 20). */
  cpuPairs?: number;
}): Promise<TracingResult> {
  const rows: TracingRow[] = [];
  const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
  try {
    for (const fanout of [false, true]) {
      const env = { OUTBOXD_SYNCHRONOUS: "NORMAL" };
      const servers = {
        off: await startOutboxd(env),
        on: await startOutboxd({
          ...env,
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_SERVICE_NAME: "outboxd-bench",
        }),
        "off (again)": await startOutboxd(env),
      };
      try {
        if (fanout) {
          for (const server of Object.values(servers)) {
            await server.api("POST", "/v1/endpoints", { url: options.receiverUrl });
          }
        }
        for (const connections of options.connections) {
          const runs: Record<Variant, number[]> = { off: [], on: [], "off (again)": [] };
          const cpu: Record<Variant, number[]> = { off: [], on: [], "off (again)": [] };
          const main: Record<Variant, number[]> = { off: [], on: [], "off (again)": [] };
          for (let round = 0; round < options.runs; round++) {
            // The order rotates per round, so no variant always runs first (or last) in a round.
            const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length] as Variant);
            for (const variant of order) {
              const cpuBefore = cpuSeconds(servers[variant].pid);
              const mainBefore = cpuSeconds(servers[variant].pid, true);
              const result = await load({
                url: `${servers[variant].url}/v1/commits`,
                connections,
                seconds: options.seconds,
                body: COMMIT_BODY,
                headers: { authorization: `Bearer ${TOKEN}`, traceparent: TRACEPARENT },
              });
              runs[variant].push(result.requestsPerSecond);
              const commits = Math.max(1, result.requestsPerSecond * options.seconds);
              cpu[variant].push(((cpuSeconds(servers[variant].pid) - cpuBefore) * 1e6) / commits);
              main[variant].push(((cpuSeconds(servers[variant].pid, true) - mainBefore) * 1e6) / commits);
            }
          }
          const m = (variant: Variant) => median(runs[variant]);
          const paired = (variant: Variant) =>
            median(runs[variant].map((x, i) => x / Math.max(1, runs.off[i] ?? 0)));
          const spans = (await (await fetch(`${sink.url}/count`)).json()) as { spans: number };
          const row: TracingRow = {
            fanout,
            connections,
            commitsPerSecond: {
              off: { median: m("off"), runs: runs.off },
              on: { median: m("on"), runs: runs.on },
              "off (again)": { median: m("off (again)"), runs: runs["off (again)"] },
            },
            cpuMicrosPerCommit: {
              off: Math.round(median(cpu.off)),
              on: Math.round(median(cpu.on)),
              "off (again)": Math.round(median(cpu["off (again)"])),
            },
            onCpuCost: round3(median(cpu.on.map((x, i) => x / Math.max(1, cpu.off[i] ?? 0))) - 1),
            mainThreadMicrosPerCommit: {
              off: Math.round(median(main.off)),
              on: Math.round(median(main.on)),
              "off (again)": Math.round(median(main["off (again)"])),
            },
            onMainThreadCost: round3(median(main.on.map((x, i) => x / Math.max(1, main.off[i] ?? 0))) - 1),
            onCost: round3(1 - paired("on")),
            noise: round3(1 - paired("off (again)")),
            spansExported: spans.spans,
          };
          rows.push(row);
          console.error(
            `tracing ${fanout ? "fan-out" : "alone"} c=${connections}: off ${m("off")}/s, on ${m("on")}/s ` +
              `(cost ${(row.onCost * 100).toFixed(1)}%), off again ${m("off (again)")}/s ` +
              `(noise ${(row.noise * 100).toFixed(1)}%); CPU/commit off ${row.cpuMicrosPerCommit.off} µs, ` +
              `on ${row.cpuMicrosPerCommit.on} µs (+${(row.onCpuCost * 100).toFixed(1)}%), ` +
              `off again ${row.cpuMicrosPerCommit["off (again)"]} µs; main thread off ${row.mainThreadMicrosPerCommit.off} µs, ` +
              `on ${row.mainThreadMicrosPerCommit.on} µs (+${(row.onMainThreadCost * 100).toFixed(1)}%), off again ` +
              `${row.mainThreadMicrosPerCommit["off (again)"]} µs; ${spans.spans} spans exported so far`,
          );
        }
      } finally {
        for (const server of Object.values(servers)) await server.stop();
      }
    }
  } finally {
    await sink.stop();
  }
  // Between processes the machine's noise often exceeds the cost; in one process, blocks of
  // commits with the hooks on and off alternate under the same heap, JIT and load.
  const inProcess: TracingCpuResult[] = [];
  for (const endpoint of ["0", "1"]) {
    const child = Bun.spawn({
      cmd: [BUN, "bench/probe/tracing-cpu.ts", String(options.cpuPairs ?? 20), "1000", endpoint],
      cwd: REPO,
      stdout: "pipe",
      stderr: "inherit",
    });
    const out = await new Response(child.stdout).text();
    if ((await child.exited) === 0) {
      const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as TracingCpuResult;
      console.error(
        `tracing in one process, ${result.endpoint ? "1 endpoint" : "no endpoint"}: CPU/commit ` +
          `${result.cpuMicrosPerCommit.off} → ${result.cpuMicrosPerCommit.on} µs (${result.added}), main thread ` +
          `${result.mainThreadMicrosPerCommit.off} → ${result.mainThreadMicrosPerCommit.on} µs (${result.mainThreadAdded})`,
      );
      inProcess.push(result);
    }
  }
  return { rows, inProcess, offHookNsPerCall: await offHookCost() };
}

/** ns per call that NO_TRACING.commit adds around an async function, against calling it straight. */
async function offHookCost(): Promise<number> {
  const run = async (traceparent: string | undefined) => traceparent;
  const calls = 1_000_000;
  const time = async (f: () => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await f();
    return ((performance.now() - started) * 1e6) / calls;
  };
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const direct = await time(() => run(TRACEPARENT));
    const hooked = await time(() => NO_TRACING.commit(TRACEPARENT, run));
    samples.push(hooked - direct);
  }
  return Math.round(median(samples) * 10) / 10;
}

/**
 * User + system CPU seconds a process has used so far (/proc/PID/stat, clock ticks of 10 ms);
 * with `mainThread`, its main thread's alone (/proc/PID/task/PID/stat).
 */
function cpuSeconds(pid: number, mainThread = false): number {
  const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export function tracingMarkdown(result: TracingResult): string[] {
  const lines = [
    "## Tracing cost (OpenTelemetry on and off, side by side)",
    "",
    "Three instances at once (synchronous=NORMAL: CPU-bound), loaded in turn each round: tracing off, " +
      "on (OTLP/HTTP to a sink on this machine), and off again (the noise floor). Every commit carries " +
      "a traceparent. Cost and noise are medians of the rounds' paired ratios.",
    "",
    "| endpoint | connections | off commits/s | on commits/s | cost of on | off again | noise | CPU µs/commit off | on | added by on | off again | main thread µs/commit off | on | added by on | off again | spans exported |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const row of result.rows) {
    const c = row.commitsPerSecond;
    lines.push(
      `| ${row.fanout ? "1, delivering" : "none"} | ${row.connections} | ${c.off.median} | ${c.on.median} | ` +
        `${(row.onCost * 100).toFixed(1)}% | ${c["off (again)"].median} | ${(row.noise * 100).toFixed(1)}% | ` +
        `${row.cpuMicrosPerCommit.off} | ${row.cpuMicrosPerCommit.on} | ${(row.onCpuCost * 100).toFixed(1)}% | ` +
        `${row.cpuMicrosPerCommit["off (again)"]} | ${row.mainThreadMicrosPerCommit.off} | ` +
        `${row.mainThreadMicrosPerCommit.on} | ${(row.onMainThreadCost * 100).toFixed(1)}% | ` +
        `${row.mainThreadMicrosPerCommit["off (again)"]} | ${row.spansExported} |`,
    );
  }
  if ((result.inProcess ?? []).length > 0) {
    lines.push(
      "",
      "In one process, blocks of 1,000 commits with the hooks on and off alternated (bench/probe/tracing-cpu.ts; " +
        "medians of the pairs' ratios):",
      "",
      "| endpoint | pairs | CPU µs/commit off | on | added | main thread µs/commit off | on | added |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const r of result.inProcess ?? []) {
      lines.push(
        `| ${r.endpoint ? "1, delivering" : "none"} | ${r.pairs} | ${r.cpuMicrosPerCommit.off} | ${r.cpuMicrosPerCommit.on} | ` +
          `${r.added} | ${r.mainThreadMicrosPerCommit.off} | ${r.mainThreadMicrosPerCommit.on} | ${r.mainThreadAdded} |`,
      );
    }
  }
  lines.push(
    "",
    `Off, the hooks add ${result.offHookNsPerCall} ns per commit (NO_TRACING.commit around the call ` +
      "against the call itself, in process): nothing measurable next to a commit's cost.",
    "",
  );
  return lines;
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  try {
    const result = await tracingScenario({
      seconds: quick ? 2 : 3,
      runs: quick ? 1 : 7,
      connections: [64],
      receiverUrl: `${receiver.url}/hook`,
      cpuPairs: quick ? 10 : 20,
    });
    console.log(tracingMarkdown(result).join("\n"));
  } finally {
    await receiver.stop();
  }
}
