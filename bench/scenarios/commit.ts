// Scenario 1: POST /v1/commits with one record and one event, at 1, 16 and 64 connections,
// power-loss-safe (synchronous=FULL) and relaxed (NORMAL), on the commit path alone and fanned
// out to one endpoint that is being delivered to at the same time. The FULL row at 64 connections
// without an endpoint has its limit beside it (bench/peers/bare-hono-sqlite.ts over HTTP): their
// runs alternate, so both meet the same minutes' fsync latency, which sets the rate of both.
import {
  BUN,
  load,
  median,
  peakRssMb,
  type Range,
  rangeOf,
  repeat,
  startOutboxd,
  startPeer,
  TOKEN,
} from "../lib.ts";

export const COMMIT_BODY = JSON.stringify({
  records: [{ collection: "orders", id: "o-[<id>]", data: { status: "paid", total: 1250 } }],
  events: [{ type: "order.paid", payload: { orderId: "o-[<id>]", total: 1250 } }],
});

export interface CommitRow {
  durability: "FULL" | "NORMAL";
  fanout: boolean;
  connections: number;
  commitsPerSecond: Range;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  peakRssMb: number;
  /** The FULL row at 64 connections without an endpoint: its limit, runs alternated with these. */
  limit?: Range;
}

export async function commitScenario(options: {
  seconds: number;
  runs: number;
  connections: number[];
  receiverUrl: string;
}): Promise<CommitRow[]> {
  const rows: CommitRow[] = [];
  const limit = await startPeer([BUN, "bench/peers/bare-hono-sqlite.ts"], {});
  try {
    for (const durability of ["FULL", "NORMAL"] as const) {
      for (const fanout of [false, true]) {
        const outboxd = await startOutboxd({ OUTBOXD_SYNCHRONOUS: durability });
        try {
          if (fanout) await outboxd.api("POST", "/v1/endpoints", { url: options.receiverUrl });
          for (const connections of options.connections) {
            const run = (url: string, headers: Record<string, string>) =>
              load({
                url: `${url}/v1/commits`,
                connections,
                seconds: options.seconds,
                body: COMMIT_BODY,
                headers,
              });
            const withLimit = durability === "FULL" && !fanout && connections === 64;
            const limitRuns: number[] = [];
            const result = await repeat(
              options.runs,
              async () => {
                const measured = await run(outboxd.url, { authorization: `Bearer ${TOKEN}` });
                if (withLimit) limitRuns.push((await run(limit.url, {})).requestsPerSecond);
                return measured;
              },
              (r) => r.requestsPerSecond,
            );
            const middle = result.runs.find((r) => r.requestsPerSecond === result.median) ?? result.runs[0];
            rows.push({
              durability,
              fanout,
              connections,
              commitsPerSecond: { median: result.median, min: result.min, max: result.max },
              p50Ms: middle?.latencyP50Ms ?? Number.NaN,
              p99Ms: middle?.latencyP99Ms ?? Number.NaN,
              errors: result.runs.reduce((n, r) => n + r.errors + r.non2xx, 0),
              peakRssMb: peakRssMb(outboxd.pid),
              ...(withLimit
                ? {
                    limit: rangeOf(limitRuns),
                  }
                : {}),
            });
            console.error(
              `commit ${durability} ${fanout ? "fan-out" : "alone"} c=${connections}: ${result.median}/s (${result.min}-${result.max})` +
                (withLimit ? `; limit ${median(limitRuns)}/s` : ""),
            );
          }
        } finally {
          await outboxd.stop();
        }
      }
    }
  } finally {
    await limit.stop();
  }
  return rows;
}
