// Prometheus metrics (DESIGN §8). Counters and histograms are kept in memory by this process;
// gauges of the outbox's state (pending, dead, oldest age…) are read from the database at
// scrape time, so every process sharing a database reports the same truth.
import type { AttemptEvent } from "../dispatch/dispatcher.ts";
import type { Stats } from "./stats.ts";

type Labels = Record<string, string>;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The Prometheus text of a label set: `{k="v",…}`, or nothing for none. */
function labelText(labels: Labels): string {
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

/** One series of a counter: its value, kept where a caller that counts often can reach it. */
interface CounterCell {
  value: number;
}

class Counter {
  readonly #values = new Map<string, CounterCell>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    this.cell(labels).value += by;
  }
  /** The series of these labels, made on first use. */
  cell(labels: Labels): CounterCell {
    const key = labelText(labels);
    let cell = this.#values.get(key);
    if (cell === undefined) {
      cell = { value: 0 };
      this.#values.set(key, cell);
    }
    return cell;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [key, cell] of this.#values) lines.push(`${this.name}${key} ${cell.value}`);
    return lines;
  }
}

/** One series of a histogram. `counts[i]`: observations in bucket i alone (cumulated when rendered). */
interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

class Histogram {
  readonly #series = new Map<string, HistogramSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[],
  ) {}
  observe(value: number, labels: Labels = {}): void {
    this.add(this.series(labels), value);
  }
  /** The series of these labels, made on first use. */
  series(labels: Labels): HistogramSeries {
    const key = labelText(labels);
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    return series;
  }
  /** One observation: its own bucket only (the first bound it does not exceed), not every one above. */
  add(series: HistogramSeries, value: number): void {
    const { buckets } = this;
    let i = 0;
    while (i < buckets.length && value > (buckets[i] as number)) i++;
    if (i < buckets.length) (series.counts[i] as number)++;
    series.sum += value;
    series.count += 1;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        lines.push(`${this.name}_bucket${labelText({ ...series.labels, le: String(bound) })} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...series.labels, le: "+Inf" })} ${series.count}`);
      lines.push(`${this.name}_sum${labelText(series.labels)} ${series.sum}`);
      lines.push(`${this.name}_count${labelText(series.labels)} ${series.count}`);
    }
    return lines;
  }
}

/** An endpoint's attempt series: its counters by result and its latency histogram. */
interface AttemptSeries {
  results: Map<string, CounterCell>;
  latency: HistogramSeries;
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

  readonly throttled = new Counter(
    "outboxd_endpoint_throttled_seconds_total",
    "Seconds this process saw an endpoint with due work held back only by its rateLimit (DESIGN §19).",
  );

  recordThrottled(endpointId: string, seconds: number): void {
    this.throttled.inc({ endpoint: endpointId }, seconds);
  }

  recordProposalDecision(decision: string, count = 1): void {
    this.proposalDecisions.inc({ decision }, count);
  }

  recordCommit(durationMs: number): void {
    this.commits.inc();
    this.commitDuration.observe(durationMs / 1000);
  }

  readonly #attemptSeries = new Map<string, AttemptSeries>();

  recordAttempt(attempt: Pick<AttemptEvent, "endpointId" | "outcome" | "recorded" | "latencyMs">): void {
    // Thousands a second: each endpoint's series are found once, then counted in place (no label
    // text, key or lookup per attempt beyond the endpoint's and the result's).
    const endpoint = attempt.endpointId;
    let series = this.#attemptSeries.get(endpoint);
    if (series === undefined) {
      series = { results: new Map(), latency: this.latency.series({ endpoint }) };
      this.#attemptSeries.set(endpoint, series);
    }
    const result = attempt.recorded ? attempt.outcome : "fenced";
    let cell = series.results.get(result);
    if (cell === undefined) {
      cell = this.attempts.cell({ endpoint, result });
      series.results.set(result, cell);
    }
    cell.value += 1;
    if (attempt.recorded && attempt.latencyMs !== null)
      this.latency.add(series.latency, attempt.latencyMs / 1000);
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
      ...this.throttled.render(),
      ...this.latency.render(),
    );
    return `${lines.join("\n")}\n`;
  }
}
