// The markdown table of a bench run (bench/run.ts): every section the run measured, each figure
// beside its limit from the same run, and the targets at the end.

import { FILTER_TARGET_US } from "./filter.ts";
import { median, type Range, rangeOf } from "./lib.ts";
import type { Results } from "./run.ts";
import type { LatencyRow } from "./scenarios/latency.ts";
import { pullMarkdown } from "./scenarios/pull.ts";
import { remoteReport } from "./scenarios/remote.ts";
import { tracingMarkdown } from "./scenarios/tracing.ts";

const range = (m: Range) => `${m.median} (${m.min}–${m.max})`;
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}` : "n/a");

/** Per rate and who: medians over the runs, and how many runs were sustained. */
export function latencySummary(rows: LatencyRow[]) {
  const keys = [...new Set(rows.map((r) => `${r.rate}|${r.who}`))];
  return keys.map((key) => {
    const [rate, who] = key.split("|") as [string, string];
    const runs = rows.filter((r) => r.rate === Number(rate) && r.who === who);
    return {
      rate: Number(rate),
      who,
      runs: runs.length,
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: median(runs.map((r) => r.p99Ms)),
      backlog: median(runs.map((r) => r.backlogAfterLoad)),
      sustained: runs.filter((r) => r.sustained).length,
      peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
    };
  });
}

/** Each scenario's CPU steal, as "backlog 4.1%". */
function steal(perScenario: Results["steal"] | undefined): string {
  const measured = Object.entries(perScenario ?? {}).filter(([, percent]) => percent !== null);
  return measured.length === 0
    ? "not measured"
    : measured.map(([name, percent]) => `${name} ${percent}%`).join(", ");
}

export function report(r: Results): string {
  const lines: string[] = [];
  lines.push(`# outboxd benchmark, ${r.startedAt}`, "");
  lines.push(
    `Machine: ${r.machine.cpus} cores (${r.machine.cpuModel}), ${r.machine.memoryGb} GiB; Bun ${r.machine.bun}, Node ${r.machine.node}; load average at start ${r.machine.loadAverage.join(" / ")}.`,
    `CPU steal (this VM's CPU time the hypervisor gave to other guests, /proc/stat; it slows figures and limits alike): ${steal(r.steal)}.`,
    `Scenarios: ${r.scenarios.join(", ")}. Loads: ${r.settings.seconds} s per throughput measurement, median of ${r.settings.runs} (range in parentheses); load generators are separate processes on 127.0.0.1.`,
    "",
  );
  const ref = (connections: number) =>
    r.peerCommits?.find((x) => x.peer.startsWith("pg-outbox") && x.connections === connections)
      ?.commitsPerSecond.median ?? 0;
  if (r.commits) {
    lines.push("## 1. Commits over HTTP (one record + one event per commit)", "");
    lines.push("| durability | endpoint | connections | commits/s | p50 ms | p99 ms | peak RSS MB |");
    lines.push("|---|---|---|---|---|---|---|");
    for (const row of r.commits) {
      lines.push(
        `| ${row.durability} | ${row.fanout ? "1, delivering" : "none"} | ${row.connections} | ${range(row.commitsPerSecond)} | ${row.p50Ms} | ${row.p99Ms} | ${row.peakRssMb} |`,
      );
    }
    const limit = r.commits.find((row) => row.limit)?.limit;
    if (limit) {
      lines.push(
        `| limit: bare Hono + the same grouped SQLite statements, FULL (its runs alternated with outboxd's FULL, none, 64) | none | 64 | ${range(limit)} | – | – | – |`,
      );
    }
    lines.push("");
  }
  if (r.commitLimits) {
    const c = r.commitLimits;
    lines.push("## 1b. Commits in process (`app.request`, no sockets, 64 concurrent, FULL)", "");
    lines.push(
      `Runs alternated in ${c.pairs} pairs with the limit (A B, B A, …), each after ${c.warmupSeconds} s of uncounted commits; the ratio is each pair's, in the same minute.`,
      "",
    );
    lines.push("| who | commits/s |", "|---|---|");
    lines.push(`| outboxd | ${range(c.inProcess)} |`);
    lines.push(`| limit: bare Hono + the same grouped SQLite statements | ${range(c.inProcessLimit)} |`);
    lines.push(`| outboxd / limit, per pair | ${range(c.ratio)} |`, "");
  }
  if (r.peerCommits) {
    lines.push("## 1c. Peers' commit path", "");
    lines.push("| peer | connections | commits/s | p99 ms | peak RSS MB |", "|---|---|---|---|---|");
    for (const row of r.peerCommits) {
      lines.push(
        `| ${row.peer} | ${row.connections} | ${range(row.commitsPerSecond)} | ${row.p99Ms} | ${row.peakRssMb} |`,
      );
    }
    if (r.limits)
      lines.push(
        `| bare @libsql/client, grouped commits (limit) | – | ${r.limits.bareLibsqlCommitsPerSecond} | – | – |`,
      );
    lines.push("");
  }
  if (r.deliveries || r.peerDeliveries) {
    lines.push("## 2. Delivery of a backlog (one endpoint, default settings)", "");
    lines.push(
      "| who | deliveries | s (first to last arrival) | deliveries/s | start-up ms (to the first arrival) | order per aggregate | peak RSS MB |",
      "|---|---|---|---|---|---|---|",
    );
    for (const row of r.deliveries ?? []) {
      lines.push(
        `| ${row.variant} | ${row.deliveries} (${row.aggregates} aggregates) | ${row.seconds} | ${row.deliveriesPerSecond} | ${row.startupMs ?? "–"} | kept | ${row.peakRssMb} |`,
      );
    }
    for (const row of r.peerDeliveries ?? []) {
      lines.push(
        `| ${row.peer} | ${row.deliveries} | ${row.seconds} | ${row.deliveriesPerSecond} | ${row.startupMs ?? "–"} | not kept | – |`,
      );
    }
    if (r.limits) {
      lines.push(
        `| limit: bare fetch, 8 in flight | – | – | ${r.limits.bareFetch8RequestsPerSecond} | – | – | – |`,
      );
      lines.push(
        `| limit: bare fetch, 64 in flight | – | – | ${r.limits.bareFetchRequestsPerSecond} | – | – | – |`,
      );
    }
    lines.push("");
  }
  const latency = r.latency ? latencySummary(r.latency) : [];
  if (r.latency) {
    lines.push(
      "## 3. Commit and deliver at once (default settings; commit response → receiver arrival)",
      "",
      `Each run is preceded by ${r.settings.latencyWarmupSeconds} s of unmeasured commits at the same rate (a warm server), for outboxd and the limit alike.`,
      "",
    );
    lines.push(
      "| commits/s | who | runs | p50 ms | p99 ms | waiting when the load stopped | sustained runs | peak RSS MB |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const row of latency) {
      lines.push(
        `| ${row.rate} | ${row.who === "limit" ? "limit: bare Hono + one fetch" : "outboxd"} | ${row.runs} | ${row.p50Ms} | ${row.p99Ms} | ${row.backlog} | ${row.sustained}/${row.runs} | ${row.peakRssMb} |`,
      );
    }
    lines.push("");
  }
  const iso = r.isolation
    ? {
        with: median(r.isolation.withHanging.map((x) => x.p99Ms)),
        without: median(r.isolation.without.map((x) => x.p99Ms)),
        withP50: median(r.isolation.withHanging.map((x) => x.p50Ms)),
        withoutP50: median(r.isolation.without.map((x) => x.p50Ms)),
      }
    : null;
  if (r.isolation && iso) {
    lines.push(
      "## 4. Isolation: a healthy endpoint at 25 commits/s beside 8 receivers that never answer",
      "",
    );
    lines.push(
      "| hanging endpoints (40 events each) | runs | healthy p50 ms | healthy p99 ms | delivered | peak RSS MB |",
    );
    lines.push("|---|---|---|---|---|---|");
    for (const [name, rows] of [
      ["0 (limit)", r.isolation.without],
      ["8", r.isolation.withHanging],
    ] as const) {
      lines.push(
        `| ${name} | ${rows.length} | ${median(rows.map((x) => x.p50Ms))} | ${median(rows.map((x) => x.p99Ms))} | ${rows.map((x) => `${x.delivered}/${x.committed}`).join(", ")} | ${Math.max(...rows.map((x) => x.peakRssMb))} |`,
      );
    }
    lines.push("");
  }
  if (r.growth) {
    lines.push("## 5. Growth: claim of 64 heads and GET /v1/stats", "");
    lines.push("| delivered history | pending backlog | claim ms | stats ms |", "|---|---|---|---|");
    for (const row of r.growth)
      lines.push(`| ${row.history} | ${row.pending} | ${row.claimMs} | ${row.statsMs} |`);
    lines.push("");
  }
  if (r.coldStart) {
    lines.push("## 6. Cold start of the executable", "");
    lines.push(
      `Binary ${r.coldStart.binaryMb} MB; start to /readyz ${range(r.coldStart.coldStartMs)} ms; idle RSS ${r.coldStart.idleRssMb} MB.`,
      "",
    );
  }

  if (r.tracing) lines.push(...tracingMarkdown(r.tracing));
  if (r.pull) lines.push(...pullMarkdown(r.pull));
  if (r.controls) {
    const c = r.controls;
    lines.push("## Endpoint controls: rate limits and filters", "");
    lines.push(
      `Rate limits: one endpoint with rateLimit {perSecond, burst: perSecond}, a backlog of ${r.settings.controlsSeconds} s worth due at once, an instant receiver; each full 10 s window of attempt starts / (perSecond × 10), the burst taken off the first.`,
      "",
    );
    lines.push(
      "| perSecond | dispatchers | delivered | 10 s windows | min ratio | max ratio | in order |",
      "|---|---|---|---|---|---|---|",
    );
    for (const row of c.rateLimits) {
      const low = row.ratios.length > 0 ? Math.min(...row.ratios).toFixed(3) : "–";
      const high = row.ratios.length > 0 ? Math.max(...row.ratios).toFixed(3) : "–";
      lines.push(
        `| ${row.perSecond} | ${row.dispatchers} | ${row.delivered}/${row.total} | ${row.windows.join(", ") || "none"} | ${low} | ${high} | ${row.ordered ? "yes" : "no"} |`,
      );
    }
    lines.push(
      "",
      `Filter of ${c.filter.conditions} conditions, all holding, the payload's parse included: ${c.filter.usPerEvent} µs per event (median of rounds ${c.filter.rounds.join(", ")}).`,
      "",
    );
  }
  lines.push("## Against the targets: figure / limit of the same run", "");
  const at = (rate: number, who: string) => latency.find((x) => x.rate === rate && x.who === who);
  for (const rate of [1000, 2000, 4000, 5000]) {
    const ours = at(rate, "outboxd");
    const limit = at(rate, "limit");
    if (!ours) continue;
    lines.push(
      `- ${rate}/s commit+deliver: p50 ${ours.p50Ms} ms / ${limit?.p50Ms} ms, p99 ${ours.p99Ms} ms / ${limit?.p99Ms} ms; sustained ${ours.sustained}/${ours.runs} runs (limit ${limit?.sustained}/${limit?.runs})` +
        (rate === 2000
          ? " — target p50 ≤ 5 ms, p99 ≤ 50 ms"
          : rate === 4000
            ? " — target p99 ≤ 100 ms"
            : rate === 5000
              ? " — target sustained"
              : ""),
    );
  }
  const drains = (r.deliveries ?? []).filter((row) => !row.verified);
  if (drains.length > 0 && r.limits) {
    const rate = rangeOf(drains.map((row) => row.deliveriesPerSecond));
    const startup = median(drains.map((row) => row.startupMs));
    const withStartup = median(drains.map((row) => row.deliveriesPerSecondWithStartup));
    lines.push(
      `- backlog of ${drains[0]?.deliveries}, default settings: ${range(rate)}/s from the first arrival to the last, median of ${drains.length} runs (target ≥ 15,000; start-up ${startup} ms, ${withStartup}/s counting it) / bare fetch 64 in flight (the default per-endpoint limit) ${r.limits.bareFetchRequestsPerSecond}/s = ${ratio(rate.median, r.limits.bareFetchRequestsPerSecond)}`,
    );
  }
  if (r.commitLimits) {
    const c = r.commitLimits;
    lines.push(
      `- commits in process: ${c.inProcess.median}/s (target ≥ 10,000) / limit ${c.inProcessLimit.median}/s; per alternated pair ${c.ratio.median} (${c.ratio.min}-${c.ratio.max}, ${c.pairs} pairs)`,
    );
  }
  const http = r.commits?.find((x) => x.limit);
  if (http?.limit) {
    lines.push(
      `- commits over HTTP, 64 connections, FULL: ${http.commitsPerSecond.median}/s / limit ${http.limit.median}/s (alternated) = ${ratio(http.commitsPerSecond.median, http.limit.median)} (target ≥ 0.90)` +
        (ref(64) > 0 ? `; ${ratio(http.commitsPerSecond.median, ref(64))}× the reference peer` : ""),
    );
  }
  if (iso) {
    lines.push(
      `- isolation: healthy p99 ${iso.with} ms with 8 hanging endpoints / ${iso.without} ms without = ${ratio(iso.with, iso.without)} (target ≤ 2)`,
    );
  }
  const rss = [
    ...(r.commits ?? []).map((x) => x.peakRssMb),
    ...(r.deliveries ?? []).map((x) => x.peakRssMb),
    ...latency.filter((x) => x.who === "outboxd").map((x) => x.peakRssMb),
    ...(r.isolation ? [...r.isolation.withHanging, ...r.isolation.without].map((x) => x.peakRssMb) : []),
  ].filter(Number.isFinite);
  if (rss.length > 0) lines.push(`- peak RSS: ${Math.max(...rss)} MB (target ≤ 200)`);
  if (r.coldStart) lines.push(`- cold start: ${r.coldStart.coldStartMs.median} ms (target ≤ 200)`);
  if (r.controls) {
    const rows = r.controls.rateLimits;
    const ratios = rows.flatMap((row) => row.ratios);
    const met = rows.filter((row) => row.met).length;
    lines.push(
      `- rate limits at 100 and 500/s, 1 and 3 dispatchers: 10 s windows ${ratios.length > 0 ? `${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}` : "none"} × the limit (target 0.9–1.1), order per aggregate kept in ${rows.filter((row) => row.ordered).length}/${rows.length} runs; met in ${met}/${rows.length}`,
      `- filter of ${r.controls.filter.conditions} conditions: ${r.controls.filter.usPerEvent} µs per event (target ≤ ${FILTER_TARGET_US})`,
    );
  }
  if (r.remote) lines.push("", ...remoteReport(r.remote));
  return `${lines.join("\n")}\n`;
}
