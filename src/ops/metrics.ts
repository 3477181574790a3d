// Prometheus metrics (DESIGN §8). Counters and histograms are kept in memory by this process;
// gauges of the outbox's state (pending, dead, oldest age…) are read from the database at
// scrape time, so every process sharing a database reports the same truth.
import type { AttemptEvent } from "../dispatch/dispatcher.ts";
import type { Stats } from "./stats.ts";

type Labels = Record<string, string>;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The text of label sets used again and again (recordAttempt's, one per endpoint and result). */
const labelTexts = new WeakMap<Labels, string>();

function labelText(labels: Labels): string {
  const known = labelTexts.get(labels);
  if (known !== undefined) return known;
  // Most series have no labels (every commit observes one): no entries array for those.
  let none = true;
  for (const _ in labels) {
    none = false;
    break;
  }
  if (none) return "";
  const entries = Object.entries(labels);
  const quote = (v: string) => v.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
  return `{${entries.map(([k, v]) => `${k}="${quote(v)}"`).join(",")}}`;
}

/** The same label set object for the same values, its text computed once (never mutated). */
function reused(cache: Map<string, Labels>, key: string, make: () => Labels): Labels {
  let labels = cache.get(key);
  if (!labels) {
    labels = make();
    labelTexts.set(labels, labelText(labels));
    cache.set(key, labels);
  }
  return labels;
}

class Counter {
  readonly #values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels);
    this.#values.set(key, (this.#values.get(key) ?? 0) + by);
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [key, value] of this.#values) lines.push(`${this.name}${key} ${value}`);
    return lines;
  }
}

class Histogram {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[],
  ) {}
  observe(value: number, labels: Labels = {}): void {
    const key = labelText(labels);
    let series = this.#series.get(key);
    if (!series) {
      series = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const { buckets } = this;
    for (let i = 0; i < buckets.length; i++) {
      if (value <= (buckets[i] as number)) (series.counts[i] as number)++;
    }
    series.sum += value;
    series.count += 1;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const series of this.#series.values()) {
      this.buckets.forEach((bound, i) => {
        lines.push(
          `${this.name}_bucket${labelText({ ...series.labels, le: String(bound) })} ${series.counts[i]}`,
        );
      });
      lines.push(`${this.name}_bucket${labelText({ ...series.labels, le: "+Inf" })} ${series.count}`);
      lines.push(`${this.name}_sum${labelText(series.labels)} ${series.sum}`);
      lines.push(`${this.name}_count${labelText(series.labels)} ${series.count}`);
    }
    return lines;
  }
}

export class Metrics {
  readonly commits = new Counter("outboxd_commits_total", "Commits stored by this process.");
  readonly commitDuration = new Histogram(
    "outboxd_commit_duration_seconds",
    "Time from a commit request's validation to its durable COMMIT.",
    COMMIT_BUCKETS,
  );
  readonly attempts = new Counter(
    "outboxd_delivery_attempts_total",
    "Delivery attempts by this process, by endpoint and result (delivered, retry, gone, dead, fenced).",
  );
  readonly latency = new Histogram(
    "outboxd_delivery_latency_seconds",
    "Time from commit (or deliverAfter) to the receiver's 2xx.",
    LATENCY_BUCKETS,
  );

  readonly proposalDecisions = new Counter(
    "outboxd_proposal_decisions_total",
    "Proposal decisions seen by this process (approved, rejected, conflicted, expired).",
  );

  recordProposalDecision(decision: string, count = 1): void {
    this.proposalDecisions.inc({ decision }, count);
  }

  recordCommit(durationMs: number): void {
    this.commits.inc();
    this.commitDuration.observe(durationMs / 1000);
  }

  readonly #attemptLabels = new Map<string, Labels>();

  recordAttempt(attempt: Pick<AttemptEvent, "endpointId" | "outcome" | "recorded" | "latencyMs">): void {
    // Thousands a second: the label sets (and their text) are made once per endpoint and result.
    const endpoint = attempt.endpointId;
    const result = attempt.recorded ? attempt.outcome : "fenced";
    this.attempts.inc(
      reused(this.#attemptLabels, `${endpoint}\u0000${result}`, () => ({ endpoint, result })),
    );
    if (attempt.recorded && attempt.latencyMs !== null) {
      this.latency.observe(
        attempt.latencyMs / 1000,
        reused(this.#attemptLabels, endpoint, () => ({ endpoint })),
      );
    }
  }

  /** The exposition text: this process's counters plus the database's gauges. */
  render(stats: Stats, proposals: Record<string, number> = {}): string {
    const lines: string[] = [];
    // Totals only: per-endpoint figures are in GET /v1/stats; mixing both in one family would
    // make sum() count everything twice.
    const gauge = (name: string, help: string, type: "gauge" | "counter", pick: (s: Stats) => number) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${pick(stats)}`);
    };
    gauge(
      "outboxd_pending_deliveries",
      "Deliveries not yet delivered nor dead (in flight included).",
      "gauge",
      (s) => s.pending,
    );
    gauge(
      "outboxd_in_flight_deliveries",
      "Pending deliveries leased now (by a dispatcher, or by a pull endpoint's consumers).",
      "gauge",
      (s) => s.inFlight,
    );
    gauge("outboxd_due_deliveries", "Pending deliveries claimable now.", "gauge", (s) => s.due);
    gauge(
      "outboxd_oldest_pending_age_seconds",
      "Age of the oldest due pending delivery, from the later of commit and deliverAfter.",
      "gauge",
      (s) => s.oldestPendingAgeSeconds,
    );
    gauge("outboxd_dead_deliveries", "Deliveries in the dead-letter queue.", "gauge", (s) => s.dead);
    gauge(
      "outboxd_deadline_exceeded_total",
      "Deliveries ever moved to dead because their deadline passed.",
      "counter",
      (s) => s.deadlineExceededTotal,
    );
    // DESIGN §12: per pull endpoint, its deliveries leased to consumers now.
    lines.push(
      "# HELP outboxd_pull_leased Deliveries of a pull endpoint leased to its consumers now.",
      "# TYPE outboxd_pull_leased gauge",
    );
    for (const e of stats.endpoints) {
      if (e.kind === "pull") lines.push(`outboxd_pull_leased${labelText({ endpoint: e.id })} ${e.inFlight}`);
    }
    lines.push("# HELP outboxd_proposals Proposals by status.", "# TYPE outboxd_proposals gauge");
    for (const [status, n] of Object.entries(proposals))
      lines.push(`outboxd_proposals{status="${status}"} ${n}`);
    lines.push(
      ...this.proposalDecisions.render(),
      ...this.commits.render(),
      ...this.commitDuration.render(),
      ...this.attempts.render(),
      ...this.latency.render(),
    );
    return `${lines.join("\n")}\n`;
  }
}
