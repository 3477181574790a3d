// Scenario 3: commit and deliver at once. Commits at a fixed rate (open loop, from a separate
// process) to outboxd with one endpoint at a separate receiver process; latency from each
// commit's response to its arrival at the receiver, and whether the rate was sustained: nothing
// refused, the backlog flat (at most 100 ms worth of commits waiting when the load stopped) and
// everything delivered within 1 s of the load stopping.
//
// Its limit, measured the same way in the same run: a bare Hono handler that stores nothing and
// makes one `fetch` to the same receiver per request (bench/peers/bare-hono-fetch.ts).
import { BUN, peakRssMb, percentile, REPO, startOutboxd, startPeer, TOKEN } from "../lib.ts";

export interface LatencyRow {
  /** "outboxd" or "limit" (the bare handler). */
  who: string;
  rate: number;
  seconds: number;
  committed: number;
  errors: number;
  delivered: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  backlogAfterLoad: number;
  sustained: boolean;
  peakRssMb: number;
  /** Unmeasured commits at the same rate before the run (see latencyScenario). */
  warmupSeconds: number;
}

export interface FixedRateResult {
  committed: number;
  errors: number;
  delivered: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Committed but not yet at the receiver when the load stopped. */
  waitingAtStop: number;
  /** Everything committed arrived within 1 s of the load stopping. */
  drained: boolean;
}

/**
 * Open-loop commits to `url` for `seconds`, then waits up to 1 s for the stragglers, and
 * measures commit response → arrival at `receiverUrl` (which must be bench/peers/receiver.ts).
 */
export async function fixedRate(options: {
  url: string;
  receiverUrl: string;
  rate: number;
  seconds: number;
  endpoints?: string[];
}): Promise<FixedRateResult> {
  const since = Date.now();
  const generator = Bun.spawn({
    cmd: [BUN, "bench/load/fixed-rate.ts"],
    cwd: REPO,
    env: {
      ...process.env,
      URL: options.url,
      TOKEN,
      RATE: String(options.rate),
      SECONDS: String(options.seconds),
      ...(options.endpoints ? { ENDPOINTS: options.endpoints.join(",") } : {}),
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const report = JSON.parse((await new Response(generator.stdout).text()).trim()) as {
    sent: number;
    ok: number;
    errors: number;
    responses: [string, number][];
  };
  await generator.exited;
  const arrivalsNow = async () =>
    (await (await fetch(`${options.receiverUrl}/arrivals?since=${since}`)).json()) as {
      id: string;
      at: number;
    }[];
  let arrivals = await arrivalsNow();
  const waitingAtStop = Math.max(0, report.ok - arrivals.length);
  const drainDeadline = Date.now() + 1000;
  while (arrivals.length < report.ok && Date.now() < drainDeadline) {
    await Bun.sleep(20);
    arrivals = await arrivalsNow();
  }
  const arrivedAt = new Map(arrivals.map((a) => [a.id, a.at]));
  // An arrival can precede the response's arrival at the client (the dispatcher is woken by
  // the commit itself): that latency counts as 0.
  const latencies = report.responses
    .map(([id, respondedAt]) => (arrivedAt.get(id) ?? Number.NaN) - respondedAt)
    .filter(Number.isFinite)
    .map((ms) => Math.max(0, ms));
  return {
    committed: report.ok,
    errors: report.errors,
    delivered: latencies.length,
    p50Ms: round(percentile(latencies, 50)),
    p95Ms: round(percentile(latencies, 95)),
    p99Ms: round(percentile(latencies, 99)),
    waitingAtStop,
    drained: latencies.length === report.ok,
  };
}

export async function latencyScenario(options: {
  rate: number;
  seconds: number;
  /**
   * Commits at the same rate before the measured run, not measured (JIT, first statements, first
   * connections): the server a user runs is warm. Both outboxd and the limit get it.
   */
  warmupSeconds?: number;
  /** Measure the limit (bare Hono + fetch) instead of outboxd. */
  limit?: boolean;
  env?: Record<string, string>;
}): Promise<LatencyRow> {
  const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  let server: { url: string; pid: number; stop(): Promise<void> };
  if (options.limit) {
    server = await startPeer([BUN, "bench/peers/bare-hono-fetch.ts"], {
      RECEIVER_URL: `${receiver.url}/hook`,
    });
  } else {
    const outboxd = await startOutboxd(options.env ?? {});
    await outboxd.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
    server = outboxd;
  }
  try {
    if (options.warmupSeconds) {
      const warm = await fixedRate({
        url: server.url,
        receiverUrl: receiver.url,
        rate: options.rate,
        seconds: options.warmupSeconds,
      });
      // The warm-up's stragglers arrive before the measured run starts (at most 5 s more).
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && (await receivedCount(receiver.url)) < warm.committed)
        await Bun.sleep(20);
    }
    const result = await fixedRate({
      url: server.url,
      receiverUrl: receiver.url,
      rate: options.rate,
      seconds: options.seconds,
    });
    const row: LatencyRow = {
      who: options.limit ? "limit" : "outboxd",
      rate: options.rate,
      seconds: options.seconds,
      committed: result.committed,
      errors: result.errors,
      delivered: result.delivered,
      p50Ms: result.p50Ms,
      p95Ms: result.p95Ms,
      p99Ms: result.p99Ms,
      backlogAfterLoad: result.waitingAtStop,
      // Sustained: nothing refused, everything delivered within 1 s after the load stopped, and
      // when it stopped no more than 100 ms worth of commits were still waiting (flat backlog).
      sustained: result.errors === 0 && result.drained && result.waitingAtStop <= options.rate / 10,
      peakRssMb: peakRssMb(server.pid),
      warmupSeconds: options.warmupSeconds ?? 0,
    };
    console.error(
      `latency ${row.who} @${options.rate}/s: p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, waiting at stop ${row.backlogAfterLoad}, sustained ${row.sustained}`,
    );
    return row;
  } finally {
    await server.stop();
    await receiver.stop();
  }
}

async function receivedCount(receiverUrl: string): Promise<number> {
  return ((await (await fetch(`${receiverUrl}/count`)).json()) as { count: number }).count;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
