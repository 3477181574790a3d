// Rate limit accuracy (DESIGN §19): an endpoint with rateLimit {perSecond, burst: perSecond}, a
// backlog of SECONDS worth of events already due, an instant receiver on 127.0.0.1, and 1 or 3
// dispatchers (`outboxd serve` plus `outboxd dispatch` children on the same database file). Each
// full 10 s window of attempt starts (by the receiver's arrival times) must hold between 0.9 and
// 1.1 × perSecond × 10 (plus burst for the first), and sequences arrive in order per aggregate.
// `npm run bench -- --only=controls` runs it (bench/run.ts); alone:
//   bun bench/rate-limit.ts                       # 100 and 500/s, 1 and 3 dispatchers, 30 s each
//   RATES=100 DISPATCHERS=1,3 SECONDS=12 bun bench/rate-limit.ts   # a short run
import { join } from "node:path";
import { startOutboxd } from "./lib.ts";

const WINDOW_MS = 10_000;

export interface RateLimitRow {
  perSecond: number;
  dispatchers: number;
  seconds: number;
  delivered: number;
  total: number;
  /** Attempt starts in each full 10 s window, from the first arrival. */
  windows: number[];
  /** Each window / (perSecond × 10), the first one's burst taken off. */
  ratios: number[];
  ordered: boolean;
  met: boolean;
}

/** One rate-limited endpoint drained from a backlog of `seconds` worth of events. */
export async function rateLimitRun(
  perSecond: number,
  dispatchers: number,
  seconds: number,
): Promise<RateLimitRow> {
  const arrivals: number[] = [];
  let ordered = true;
  const last = new Map<string, number>();
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      arrivals.push(performance.now());
      const body = (await request.json()) as { aggregate: string; sequence: number };
      if ((last.get(body.aggregate) ?? 0) >= body.sequence) ordered = false;
      last.set(body.aggregate, body.sequence);
      return new Response("{}");
    },
  });
  const serve = await startOutboxd({ OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1" });
  const others = [];
  for (let i = 1; i < dispatchers; i++) {
    others.push(
      await startOutboxd(
        {
          OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
          OUTBOXD_DATABASE_URL: `file:${join(serve.dir, "outboxd.db")}`,
        },
        "dispatch",
        serve.dir,
      ),
    );
  }
  try {
    const created = await serve.api("POST", "/v1/endpoints", {
      url: `http://127.0.0.1:${receiver.port}/hook`,
      rateLimit: { perSecond, burst: perSecond },
      eventTypes: ["rate.*"],
    });
    if (created.status !== 201) throw new Error(`endpoint: ${created.status}`);
    // Every dispatcher sees the rate-limited endpoint at its next sweep (≤ 1 s); the backlog is
    // committed held back by deliverAfter, so it all becomes due at one moment, after that.
    const total = perSecond * seconds;
    const dueAt = new Date(Date.now() + 3_000 + total / 2).toISOString();
    for (let done = 0; done < total; done += 100) {
      const events = Array.from({ length: Math.min(100, total - done) }, (_, i) => ({
        type: "rate.x",
        aggregate: `rate/${(done + i) % 200}`,
        deliverAfter: dueAt,
      }));
      const answer = await serve.api("POST", "/v1/commits", { events });
      if (answer.status !== 201) throw new Error(`commit: ${answer.status}`);
    }
    const deadline = Date.now() + (seconds + 30) * 1000;
    while (arrivals.length < total && Date.now() < deadline) await Bun.sleep(200);
    const first = arrivals[0] ?? 0;
    const windows: number[] = [];
    for (let start = first; start + WINDOW_MS <= (arrivals.at(-1) ?? 0); start += WINDOW_MS)
      windows.push(arrivals.filter((t) => t >= start && t < start + WINDOW_MS).length);
    const expected = (perSecond * WINDOW_MS) / 1000;
    const ratios = windows.map((n, i) => Number(((i === 0 ? n - perSecond : n) / expected).toFixed(3)));
    const met = ratios.length > 0 && ratios.every((r) => r >= 0.9 && r <= 1.1) && ordered;
    return {
      perSecond,
      dispatchers,
      seconds,
      delivered: arrivals.length,
      total,
      windows,
      ratios,
      ordered,
      met,
    };
  } finally {
    for (const other of others) await other.stop();
    await serve.stop();
    await receiver.stop(true);
  }
}

/** One line per run, as the script alone prints it. */
export function rateLimitLine(row: RateLimitRow): string {
  return (
    `rate limit ${row.perSecond}/s, ${row.dispatchers} dispatcher(s): ${row.delivered}/${row.total} delivered; ` +
    `10 s windows ${row.windows.join(", ")} (ratio ${row.ratios.join(", ")}; target 0.9-1.1); ` +
    `order per aggregate ${row.ordered ? "kept" : "BROKEN"} ${row.met ? "MET" : "MISSED"}`
  );
}

if (import.meta.main) {
  const rates = (process.env.RATES ?? "100,500").split(",").map(Number);
  const dispatchers = (process.env.DISPATCHERS ?? "1,3").split(",").map(Number);
  const seconds = Number(process.env.SECONDS ?? 30);
  for (const perSecond of rates)
    for (const count of dispatchers)
      console.log(rateLimitLine(await rateLimitRun(perSecond, count, seconds)));
}
