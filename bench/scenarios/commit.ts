// Scenario 1: POST /v1/commits with one record and one event, at 1, 16 and 64 connections,
// power-loss-safe (synchronous=FULL) and relaxed (NORMAL), on the commit path alone and fanned
// out to one endpoint that is being delivered to at the same time.
import { load, peakRssMb, repeat, startOutboxd, TOKEN } from "../lib.ts";

export const COMMIT_BODY = JSON.stringify({
  records: [{ collection: "orders", id: "o-[<id>]", data: { status: "paid", total: 1250 } }],
  events: [{ type: "order.paid", payload: { orderId: "o-[<id>]", total: 1250 } }],
});

export interface CommitRow {
  durability: "FULL" | "NORMAL";
  fanout: boolean;
  connections: number;
  commitsPerSecond: { median: number; min: number; max: number };
  p50Ms: number;
  p99Ms: number;
  errors: number;
  peakRssMb: number;
}

export async function commitScenario(options: {
  seconds: number;
  runs: number;
  connections: number[];
  receiverUrl: string;
}): Promise<CommitRow[]> {
  const rows: CommitRow[] = [];
  for (const durability of ["FULL", "NORMAL"] as const) {
    for (const fanout of [false, true]) {
      const outboxd = await startOutboxd({ OUTBOXD_SYNCHRONOUS: durability });
      try {
        if (fanout) await outboxd.api("POST", "/v1/endpoints", { url: options.receiverUrl });
        for (const connections of options.connections) {
          const result = await repeat(
            options.runs,
            () =>
              load({
                url: `${outboxd.url}/v1/commits`,
                connections,
                seconds: options.seconds,
                body: COMMIT_BODY,
                headers: { authorization: `Bearer ${TOKEN}` },
              }),
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
          });
          console.error(
            `commit ${durability} ${fanout ? "fan-out" : "alone"} c=${connections}: ${result.median}/s (${result.min}-${result.max})`,
          );
        }
      } finally {
        await outboxd.stop();
      }
    }
  }
  return rows;
}
