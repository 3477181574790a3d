// `npm run bench`: every scenario, outboxd and its peers in one run on this machine, medians of
// several runs with their ranges, written to bench/results/<time>.json and .md.
//   npm run bench                 # the full run (several minutes)
//   npm run bench -- --quick      # shorter loads, fewer runs: a smoke test of the harness
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { BUN, REPO, startPeer } from "./lib.ts";
import { startPostgres } from "./peers/postgres.ts";
import { type ColdStartRow, coldStartScenario } from "./scenarios/coldstart.ts";
import { type CommitRow, commitScenario } from "./scenarios/commit.ts";
import { type DeliveryRow, deliveryScenario } from "./scenarios/delivery.ts";
import { type GrowthRow, growthScenario } from "./scenarios/growth.ts";
import { type LatencyRow, latencyScenario } from "./scenarios/latency.ts";
import {
  limits,
  type PeerCommitRow,
  type PeerDeliveryRow,
  peerCommits,
  peerDeliveries,
} from "./scenarios/peers.ts";

const quick = process.argv.includes("--quick");
const settings = quick
  ? {
      seconds: 2,
      runs: 1,
      connections: [1, 64],
      backlog: 10_000,
      growth: [10_000, 100_000],
      latencySeconds: 3,
    }
  : {
      seconds: 5,
      runs: 3,
      connections: [1, 16, 64],
      backlog: 100_000,
      growth: [10_000, 100_000, 1_000_000],
      latencySeconds: 10,
    };
// The dispatcher's per-endpoint limit is raised for the one-endpoint delivery scenarios (the
// default, 8, is a politeness limit towards receivers, not a throughput setting).
const DELIVERY_ENV = { OUTBOXD_ENDPOINT_CONCURRENCY: "64" };

interface Results {
  startedAt: string;
  machine: { cpus: number; cpuModel: string; memoryGb: number; bun: string; node: string };
  settings: typeof settings;
  commits: CommitRow[];
  peerCommits: PeerCommitRow[];
  deliveries: DeliveryRow[];
  peerDeliveries: PeerDeliveryRow[];
  limits: Awaited<ReturnType<typeof limits>>;
  latency: LatencyRow[];
  growth: GrowthRow[];
  coldStart: ColdStartRow;
}

const startedAt = new Date().toISOString();
const postgres = await startPostgres();
let results: Results;
try {
  const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  let commits: CommitRow[];
  try {
    commits = await commitScenario({ ...settings, receiverUrl: `${receiver.url}/hook` });
  } finally {
    await receiver.stop();
  }
  const peerCommitRows = await peerCommits({ databaseUrl: postgres.url, ...settings });
  const deliveries = [
    await deliveryScenario({ total: settings.backlog, aggregates: 1000, verify: false, env: DELIVERY_ENV }),
    await deliveryScenario({ total: settings.backlog, aggregates: 1000, verify: true, env: DELIVERY_ENV }),
  ];
  const peerDeliveryRows = await peerDeliveries({
    databaseUrl: postgres.url,
    total: settings.backlog,
    aggregates: 1000,
  });
  const limitRows = await limits(settings.seconds);
  const latency = [
    await latencyScenario({ rate: 500, seconds: settings.latencySeconds, env: DELIVERY_ENV }),
    await latencyScenario({ rate: 2000, seconds: settings.latencySeconds, env: DELIVERY_ENV }),
  ];
  const growth = await growthScenario(settings.growth);
  const coldStart = await coldStartScenario(quick ? 2 : 5);
  results = {
    startedAt,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      memoryGb: Math.round(totalmem() / 2 ** 30),
      bun: Bun.version,
      node: Bun.spawnSync(["node", "--version"]).stdout.toString().trim(),
    },
    settings,
    commits,
    peerCommits: peerCommitRows,
    deliveries,
    peerDeliveries: peerDeliveryRows,
    limits: limitRows,
    latency,
    growth,
    coldStart,
  };
} finally {
  await postgres.stop();
}

const dir = join(REPO, "bench/results");
mkdirSync(dir, { recursive: true });
const stamp = startedAt.replaceAll(":", "-").replace(/\..*/, "");
writeFileSync(join(dir, `${stamp}${quick ? "-quick" : ""}.json`), `${JSON.stringify(results, null, 2)}\n`);
const markdown = report(results);
writeFileSync(join(dir, `${stamp}${quick ? "-quick" : ""}.md`), markdown);
console.log(markdown);

function report(r: Results): string {
  const c = (durability: string, fanout: boolean, connections: number) =>
    r.commits.find(
      (x) => x.durability === durability && x.fanout === fanout && x.connections === connections,
    );
  const ref = (connections: number) =>
    r.peerCommits.find((x) => x.peer.startsWith("pg-outbox") && x.connections === connections)
      ?.commitsPerSecond.median ?? 0;
  const range = (m: { median: number; min: number; max: number }) => `${m.median} (${m.min}–${m.max})`;
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}×` : "n/a");
  const lines: string[] = [];
  lines.push(`# outboxd benchmark, ${r.startedAt}`, "");
  lines.push(
    `Machine: ${r.machine.cpus} cores (${r.machine.cpuModel}), ${r.machine.memoryGb} GiB; Bun ${r.machine.bun}, Node ${r.machine.node}.`,
    `Loads: ${r.settings.seconds} s per measurement, median of ${r.settings.runs} (range in parentheses); load generators are separate processes on 127.0.0.1.`,
    "",
  );
  lines.push("## 1. Commits over HTTP (one record + one event per commit)", "");
  lines.push(
    "| durability | endpoint | connections | commits/s | p50 ms | p99 ms | peak RSS MB | vs reference peer |",
  );
  lines.push("|---|---|---|---|---|---|---|---|");
  for (const row of r.commits) {
    lines.push(
      `| ${row.durability} | ${row.fanout ? "1, delivering" : "none"} | ${row.connections} | ${range(row.commitsPerSecond)} | ${row.p50Ms} | ${row.p99Ms} | ${row.peakRssMb} | ${ratio(row.commitsPerSecond.median, ref(row.connections))} |`,
    );
  }
  lines.push("", "| peer | connections | commits/s | p99 ms | peak RSS MB |", "|---|---|---|---|---|");
  for (const row of r.peerCommits) {
    lines.push(
      `| ${row.peer} | ${row.connections} | ${range(row.commitsPerSecond)} | ${row.p99Ms} | ${row.peakRssMb} |`,
    );
  }
  lines.push(
    `| bare @libsql/client, grouped commits (limit) | – | ${r.limits.bareLibsqlCommitsPerSecond} | – | – |`,
  );
  lines.push("");
  lines.push("## 2. Delivery of a backlog", "");
  lines.push(
    "| who | deliveries | s | deliveries/s | order per aggregate | peak RSS MB |",
    "|---|---|---|---|---|---|",
  );
  for (const row of r.deliveries) {
    lines.push(
      `| ${row.variant} | ${row.deliveries} (${row.aggregates} aggregates) | ${row.seconds} | ${row.deliveriesPerSecond} | kept | ${row.peakRssMb} |`,
    );
  }
  for (const row of r.peerDeliveries) {
    lines.push(
      `| ${row.peer} | ${row.deliveries} | ${row.seconds} | ${row.deliveriesPerSecond} | not kept | – |`,
    );
  }
  lines.push(`| bare fetch, 64 in flight (limit) | – | – | ${r.limits.bareFetchRequestsPerSecond} | – | – |`);
  const reference = r.peerDeliveries.find((x) => x.peer.startsWith("pg-outbox"))?.deliveriesPerSecond ?? 0;
  const ours = r.deliveries[0]?.deliveriesPerSecond ?? 0;
  lines.push("", `outboxd / reference publisher: **${ratio(ours, reference)}**.`, "");
  lines.push("## 3. End-to-end latency (commit response → receiver arrival)", "");
  lines.push(
    "| rate/s | committed | p50 ms | p95 ms | p99 ms | backlog after load | sustained |",
    "|---|---|---|---|---|---|---|",
  );
  for (const row of r.latency) {
    lines.push(
      `| ${row.rate} | ${row.committed} | ${row.p50Ms} | ${row.p95Ms} | ${row.p99Ms} | ${row.backlogAfterLoad} | ${row.sustained ? "yes" : "no"} |`,
    );
  }
  lines.push("", "## 4. Growth: claim of 64 heads and GET /v1/stats", "");
  lines.push("| delivered history | pending backlog | claim ms | stats ms |", "|---|---|---|---|");
  for (const row of r.growth)
    lines.push(`| ${row.history} | ${row.pending} | ${row.claimMs} | ${row.statsMs} |`);
  lines.push("", "## 5. Cold start of the executable", "");
  lines.push(
    `Binary ${r.coldStart.binaryMb} MB; start to /readyz ${range(r.coldStart.coldStartMs)} ms; idle RSS ${r.coldStart.idleRssMb} MB.`,
    "",
  );
  const full = c("FULL", false, 64)?.commitsPerSecond.median ?? 0;
  lines.push("## Against the targets", "");
  lines.push(
    `- commits at 64 connections, FULL durability, commit path alone: ${full}/s (target ≥ 10,000; ${ratio(full, ref(64))} the reference peer, target ≥ 2×)`,
  );
  lines.push(
    `- delivery: ${ours}/s (target ≥ 15,000; ${ratio(ours, reference)} the reference publisher, target ≥ 5×)`,
  );
  const l2000 = r.latency.find((x) => x.rate === 2000);
  lines.push(
    `- latency at 2,000 commits/s: p50 ${l2000?.p50Ms} ms (≤ 5), p99 ${l2000?.p99Ms} ms (≤ 50), sustained: ${l2000?.sustained ? "yes" : "no"}`,
  );
  lines.push(
    `- cold start ${r.coldStart.coldStartMs.median} ms (≤ 200); RSS ≤ 200 MB everywhere: ${Math.max(...r.commits.map((x) => x.peakRssMb), ...r.deliveries.map((x) => x.peakRssMb))} MB peak`,
  );
  return `${lines.join("\n")}\n`;
}
