// `npm run bench`: outboxd, its limits and its peers in one run on this machine, medians of
// several runs with their ranges, written to bench/results/<time>.json and .md. Every figure
// is printed beside its limit measured in the same run (figure / limit).
//   npm run bench                                # every scenario (long: half an hour on 2 cores)
//   npm run bench -- --quick                     # shorter loads, one run each: a smoke test
//   npm run bench -- --only=latency,isolation    # only these scenarios (names below)
// Scenarios: commits (HTTP, with the bare Hono + SQLite limit), inprocess (commits without
// sockets, and their limit), peers (PostgreSQL outbox and pg-boss), backlog (100,000
// deliveries, default settings), latency (commit and deliver at 1,000-5,000/s, default
// settings, with the bare Hono + fetch limit), isolation (hanging receivers beside a healthy
// one), growth, coldstart, remote (a real libSQL server, sqld, with and without 2 ms added per round trip), pull
// (pull endpoints: 4 pollers draining 1,000 aggregates, SSE latency at 1,000/s, 1,000 idle streams),
// tracing (OpenTelemetry spans on and off), controls (endpoint rate limits at 100 and 500/s with 1
// and 3 dispatchers, bench/rate-limit.ts; a filter of 20 conditions per event, bench/filter.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { type FilterCost, filterCost } from "./filter.ts";
import { BUN, cpuTimes, REPO, startPeer, stealPercent } from "./lib.ts";
import { startPostgres } from "./peers/postgres.ts";
import { type RateLimitRow, rateLimitRun } from "./rate-limit.ts";
import { report } from "./report.ts";
import { type ColdStartRow, coldStartScenario } from "./scenarios/coldstart.ts";
import { type CommitRow, commitScenario } from "./scenarios/commit.ts";
import { type CommitLimitRow, commitLimitScenario } from "./scenarios/commit-limit.ts";
import { type DeliveryRow, deliveryScenario } from "./scenarios/delivery.ts";
import { type GrowthRow, growthScenario } from "./scenarios/growth.ts";
import { type IsolationRow, isolationScenario } from "./scenarios/isolation.ts";
import { type LatencyRow, latencyScenario } from "./scenarios/latency.ts";
import {
  limits,
  type PeerCommitRow,
  type PeerDeliveryRow,
  peerCommits,
  peerDeliveries,
} from "./scenarios/peers.ts";
import { type PullResults, pullScenario } from "./scenarios/pull.ts";
import { type RemoteResults, remoteScenarios } from "./scenarios/remote.ts";
import { type TracingResult, tracingScenario } from "./scenarios/tracing.ts";

const SCENARIOS = [
  "commits",
  "inprocess",
  "peers",
  "backlog",
  "latency",
  "isolation",
  "growth",
  "coldstart",
  "remote",
  "tracing",
  "pull",
  "controls",
] as const;
type Scenario = (typeof SCENARIOS)[number];

const quick = process.argv.includes("--quick");
const onlyArg = process.argv.find((a) => a.startsWith("--only="));
const only = onlyArg ? onlyArg.slice("--only=".length).split(",").filter(Boolean) : [...SCENARIOS];
for (const name of only) {
  if (!(SCENARIOS as readonly string[]).includes(name)) {
    console.error(`unknown scenario "${name}"; choose from: ${SCENARIOS.join(", ")}`);
    process.exit(2);
  }
}
const wanted = (name: Scenario) => only.includes(name);

export const settings = quick
  ? {
      seconds: 2,
      runs: 1,
      connections: [1, 64],
      inProcessPairs: 2,
      inProcessWarmupSeconds: 1,
      backlog: 10_000,
      growth: [10_000, 100_000],
      latencySeconds: 3,
      latencyWarmupSeconds: 1,
      rates: [1000, 2000, 4000, 5000],
      isolationSeconds: 20,
      controlsSeconds: 12,
      controlsRuns: 1,
    }
  : {
      seconds: 5,
      runs: 3,
      connections: [1, 16, 64],
      // In-process commits and their limit, alternated (bench/scenarios/commit-limit.ts), each
      // after 2 s uncounted: the JIT compiles outboxd's commit path for its first ~50,000 commits.
      inProcessPairs: 5,
      inProcessWarmupSeconds: 2,
      backlog: 100_000,
      growth: [10_000, 100_000, 1_000_000],
      latencySeconds: 10,
      latencyWarmupSeconds: 2,
      rates: [1000, 2000, 4000, 5000],
      // Longer than the default send timeout (15 s): the hanging sends time out during the load.
      isolationSeconds: 20,
      // Rate limits: a backlog of 30 s worth per rate and dispatcher count. One run of each
      // takes ~40 s (start-up, the wait until the backlog is due, the drain), ~3 minutes for the
      // four; medians of 3 would take ~8 minutes, so a full run measures each once.
      controlsSeconds: 30,
      controlsRuns: 1,
    };

export interface Results {
  startedAt: string;
  scenarios: string[];
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    bun: string;
    node: string;
    loadAverage: number[];
  };
  settings: typeof settings;
  /** Per scenario, the share of this VM's CPU time (%) stolen by other guests while it ran. */
  steal: Partial<Record<Scenario, number | null>>;
  commits?: CommitRow[];
  commitLimits?: CommitLimitRow;
  peerCommits?: PeerCommitRow[];
  deliveries?: DeliveryRow[];
  peerDeliveries?: PeerDeliveryRow[];
  limits?: Awaited<ReturnType<typeof limits>>;
  latency?: LatencyRow[];
  isolation?: { withHanging: IsolationRow[]; without: IsolationRow[] };
  growth?: GrowthRow[];
  coldStart?: ColdStartRow;
  remote?: RemoteResults;
  tracing?: TracingResult;
  pull?: PullResults;
  controls?: { rateLimits: RateLimitRow[]; filter: FilterCost };
}

const startedAt = new Date().toISOString();
const { loadavg } = await import("node:os");
const results: Results = {
  startedAt,
  scenarios: only,
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGb: Math.round(totalmem() / 2 ** 30),
    bun: Bun.version,
    node: Bun.spawnSync(["node", "--version"]).stdout.toString().trim(),
    loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
  },
  settings,
  steal: {},
};

/** Runs one scenario's measurements and records the CPU steal while they ran. */
async function scenario<T>(name: Scenario, measure: () => Promise<T>): Promise<T> {
  const before = cpuTimes();
  try {
    return await measure();
  } finally {
    results.steal[name] = stealPercent(before, cpuTimes());
  }
}

if (wanted("commits")) {
  results.commits = await scenario("commits", async () => {
    const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
    try {
      return await commitScenario({ ...settings, receiverUrl: `${receiver.url}/hook` });
    } finally {
      await receiver.stop();
    }
  });
}
if (wanted("commits") || wanted("inprocess")) {
  results.commitLimits = await scenario("inprocess", () =>
    commitLimitScenario({
      seconds: settings.seconds,
      pairs: settings.inProcessPairs,
      warmupSeconds: settings.inProcessWarmupSeconds,
    }),
  );
}
if (wanted("backlog") || wanted("peers")) results.limits = await limits(settings.seconds);
if (wanted("backlog")) {
  // Default settings: what a user gets. The target is a median of runs, so the plain
  // drain runs settings.runs times, each on a fresh file and receiver; every run is reported.
  results.deliveries = await scenario("backlog", async () => {
    const backlog = { total: settings.backlog, aggregates: 1000 };
    const rows: DeliveryRow[] = [];
    for (let run = 0; run < settings.runs; run++)
      rows.push(await deliveryScenario({ ...backlog, verify: false }));
    rows.push(await deliveryScenario({ ...backlog, verify: true }));
    return rows;
  });
}
if (wanted("peers")) {
  await scenario("peers", async () => {
    const postgres = await startPostgres();
    try {
      results.peerCommits = await peerCommits({ databaseUrl: postgres.url, ...settings });
      results.peerDeliveries = await peerDeliveries({
        databaseUrl: postgres.url,
        total: settings.backlog,
        aggregates: 1000,
      });
    } finally {
      await postgres.stop();
    }
  });
}
if (wanted("latency")) {
  results.latency = await scenario("latency", async () => {
    const rows: LatencyRow[] = [];
    for (let run = 0; run < settings.runs; run++) {
      for (const rate of settings.rates) {
        const run = { rate, seconds: settings.latencySeconds, warmupSeconds: settings.latencyWarmupSeconds };
        rows.push(await latencyScenario(run));
        rows.push(await latencyScenario({ ...run, limit: true }));
      }
    }
    return rows;
  });
}
if (wanted("isolation")) {
  results.isolation = await scenario("isolation", async () => {
    const withHanging: IsolationRow[] = [];
    const without: IsolationRow[] = [];
    for (let run = 0; run < settings.runs; run++) {
      const base = { eventsEach: 40, rate: 25, seconds: settings.isolationSeconds };
      without.push(await isolationScenario({ ...base, hanging: 0 }));
      withHanging.push(await isolationScenario({ ...base, hanging: 8 }));
    }
    return { withHanging, without };
  });
}
if (wanted("tracing")) {
  // OpenTelemetry on vs off: one server switched in blocks, separate servers, the off hooks.
  results.tracing = await scenario("tracing", async () => {
    const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
    try {
      return await tracingScenario({
        // The issue's figure: one server, its spans switched on and off in short blocks.
        toggledRounds: quick ? 12 : 30,
        blockMs: 600,
        // Separate servers, loaded in turn in blocks of the same length.
        separateRounds: quick ? 12 : 30,
        receiverUrl: `${receiver.url}/hook`,
      });
    } finally {
      await receiver.stop();
    }
  });
}
// Pull endpoints: 4 pollers draining 1,000 aggregates, stream latency at 1,000/s, idle streams.
if (wanted("pull")) results.pull = await scenario("pull", () => pullScenario(quick));
// Endpoint controls: rate-limit accuracy (separate processes) and a filter's cost (in process).
if (wanted("controls")) {
  results.controls = await scenario("controls", async () => {
    const rateLimits: RateLimitRow[] = [];
    for (let run = 0; run < settings.controlsRuns; run++)
      for (const perSecond of [100, 500])
        for (const dispatchers of [1, 3])
          rateLimits.push(await rateLimitRun(perSecond, dispatchers, settings.controlsSeconds));
    return { rateLimits, filter: filterCost() };
  });
}
if (wanted("growth")) results.growth = await scenario("growth", () => growthScenario(settings.growth));
// Starts take ~0.2 s each: a quick run still takes the median of five.
if (wanted("coldstart"))
  results.coldStart = await scenario("coldstart", () => coldStartScenario(quick ? 5 : 9));
if (wanted("remote")) results.remote = await scenario("remote", () => remoteScenarios(quick));

const dir = join(REPO, "bench/results");
mkdirSync(dir, { recursive: true });
const stamp = `${startedAt.replaceAll(":", "-").replace(/\..*/, "")}${quick ? "-quick" : ""}${onlyArg ? `-${only.join("+")}` : ""}`;
writeFileSync(join(dir, `${stamp}.json`), `${JSON.stringify(results, null, 2)}\n`);
const markdown = report(results);
writeFileSync(join(dir, `${stamp}.md`), markdown);
console.log(markdown);
