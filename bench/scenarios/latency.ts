// Scenario 3: commits at a fixed rate (open loop, from a separate process) while delivering;
// latency from the commit's response to the receiver's arrival, and whether the backlog stays
// flat (a sustained-rate test: after the load stops, what is left must drain at once).
import { BUN, percentile, REPO, startOutboxd, startPeer, TOKEN } from "../lib.ts";

export interface LatencyRow {
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
}

export async function latencyScenario(options: {
  rate: number;
  seconds: number;
  env?: Record<string, string>;
}): Promise<LatencyRow> {
  const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  const outboxd = await startOutboxd(options.env ?? {});
  try {
    await outboxd.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
    const since = Date.now();
    const generator = Bun.spawn({
      cmd: [BUN, "bench/load/fixed-rate.ts"],
      cwd: REPO,
      env: {
        ...process.env,
        URL: outboxd.url,
        TOKEN,
        RATE: String(options.rate),
        SECONDS: String(options.seconds),
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
    const backlog = ((await outboxd.api("GET", "/v1/stats")).body as { pending: number }).pending;
    // Whatever is left must be delivered within a second for the rate to count as sustained.
    const drainDeadline = Date.now() + 1000;
    let arrivals: { id: string; at: number }[] = [];
    while (Date.now() < drainDeadline) {
      arrivals = (await (await fetch(`${receiver.url}/arrivals?since=${since}`)).json()) as typeof arrivals;
      if (arrivals.length >= report.ok) break;
      await Bun.sleep(20);
    }
    const arrivedAt = new Map(arrivals.map((a) => [a.id, a.at]));
    // An arrival can precede the response's arrival at the client (the dispatcher is woken by
    // the commit itself): that latency counts as 0.
    const latencies = report.responses
      .map(([id, respondedAt]) => (arrivedAt.get(id) ?? Number.NaN) - respondedAt)
      .filter(Number.isFinite)
      .map((ms) => Math.max(0, ms));
    const row = {
      rate: options.rate,
      seconds: options.seconds,
      committed: report.ok,
      errors: report.errors,
      delivered: latencies.length,
      p50Ms: round(percentile(latencies, 50)),
      p95Ms: round(percentile(latencies, 95)),
      p99Ms: round(percentile(latencies, 99)),
      backlogAfterLoad: backlog,
      // Sustained: nothing refused, everything delivered, and when the load stopped no more than
      // 100 ms worth of commits were still waiting (the backlog did not grow).
      sustained: report.errors === 0 && latencies.length === report.ok && backlog <= options.rate / 10,
    };
    console.error(
      `latency @${options.rate}/s: p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, sustained ${row.sustained}`,
    );
    return row;
  } finally {
    await outboxd.stop();
    await receiver.stop();
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
