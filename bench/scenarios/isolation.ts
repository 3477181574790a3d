// Scenario 6: one endpoint's trouble must not slow another. Eight endpoints whose receivers
// never answer (default send timeout), each sent 40 events, plus one healthy endpoint sent
// commits at 25/s: the healthy endpoint's commit → arrival latency, next to the same load with
// no hanging endpoints (its limit), both in this run.
import { BUN, peakRssMb, startOutboxd, startPeer } from "../lib.ts";
import { fixedRate } from "./latency.ts";

export interface IsolationRow {
  hangingEndpoints: number;
  eventsEach: number;
  rate: number;
  seconds: number;
  committed: number;
  delivered: number;
  p50Ms: number;
  p99Ms: number;
  peakRssMb: number;
}

export async function isolationScenario(options: {
  hanging: number;
  eventsEach: number;
  rate: number;
  seconds: number;
}): Promise<IsolationRow> {
  const healthy = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  const stuck = await startPeer([BUN, "bench/peers/receiver.ts"], { HANG: "1" });
  const outboxd = await startOutboxd({});
  try {
    const created = await outboxd.api("POST", "/v1/endpoints", { url: `${healthy.url}/hook` });
    const healthyId = (created.body as { id: string }).id;
    for (let i = 0; i < options.hanging; i++) {
      const hung = await outboxd.api("POST", "/v1/endpoints", { url: `${stuck.url}/hook/${i}` });
      const id = (hung.body as { id: string }).id;
      const events = Array.from({ length: options.eventsEach }, (_, j) => ({
        type: "order.changed",
        aggregate: `stuck/${i}/${j}`,
        payload: { j },
        endpoints: [id],
      }));
      const response = await outboxd.api("POST", "/v1/commits", { events });
      if (response.status !== 201) throw new Error(`commit to a hanging endpoint: ${response.status}`);
    }
    const result = await fixedRate({
      url: outboxd.url,
      receiverUrl: healthy.url,
      rate: options.rate,
      seconds: options.seconds,
      endpoints: [healthyId],
    });
    const row = {
      hangingEndpoints: options.hanging,
      eventsEach: options.eventsEach,
      rate: options.rate,
      seconds: options.seconds,
      committed: result.committed,
      delivered: result.delivered,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      peakRssMb: peakRssMb(outboxd.pid),
    };
    console.error(
      `isolation, ${options.hanging} hanging: healthy p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms (${row.delivered}/${row.committed})`,
    );
    return row;
  } finally {
    // Its sends to the hanging receivers are still waiting: stopping waits for them at most the
    // send timeout, then the leases are left to run out (the database is thrown away).
    await outboxd.stop();
    await stuck.stop();
    await healthy.stop();
  }
}
