// The largest allowed fan-out against a small commit: while
// one commit writes OUTBOXD_MAX_DELIVERIES_PER_COMMIT deliveries (100 events x 100 endpoints),
// a one-record commit sent meanwhile must wait at most 250 ms. A real `outboxd serve` child;
// small commits are sent back to back from this process while each big commit runs.
//   bun bench/fanout.ts            # 5 rounds
import { percentile, startOutboxd } from "./lib.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ENDPOINTS = 100;
const EVENTS = 100;
const TARGET_MS = 250;

const outboxd = await startOutboxd({ OUTBOXD_MAX_DELIVERIES_PER_COMMIT: String(ENDPOINTS * EVENTS) });
try {
  for (let i = 0; i < ENDPOINTS; i++) {
    // Never attempted during the run: the events are scheduled a day ahead.
    const created = await outboxd.api("POST", "/v1/endpoints", {
      url: `http://127.0.0.1:9/${i}`,
      eventTypes: ["fan.*"],
    });
    if (created.status !== 201) throw new Error(`endpoint: ${created.status}`);
  }
  const later = new Date(Date.now() + 86_400_000).toISOString();
  const big = {
    events: Array.from({ length: EVENTS }, (_, i) => ({
      type: "fan.out",
      aggregate: `fan/${i}`,
      deliverAfter: later,
    })),
  };
  const bigMs: number[] = [];
  const smallMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let running = true;
    const started = performance.now();
    const bigCommit = outboxd.api("POST", "/v1/commits", big).then((r) => {
      if (r.status !== 201) throw new Error(`big commit: ${r.status} ${JSON.stringify(r.body)}`);
      bigMs.push(performance.now() - started);
      running = false;
    });
    let n = 0;
    while (running) {
      const t = performance.now();
      const r = await outboxd.api("POST", "/v1/commits", {
        records: [{ collection: "small", id: `r-${round}-${n++}`, data: { n } }],
      });
      if (r.status !== 201) throw new Error(`small commit: ${r.status}`);
      smallMs.push(performance.now() - t);
    }
    await bigCommit;
  }
  const worst = Math.max(...smallMs);
  console.log(
    JSON.stringify({
      deliveriesPerBigCommit: ENDPOINTS * EVENTS,
      rounds: ROUNDS,
      bigCommitMs: { p50: Math.round(percentile(bigMs, 50)), max: Math.round(Math.max(...bigMs)) },
      smallCommits: smallMs.length,
      smallCommitMs: {
        p50: Math.round(percentile(smallMs, 50)),
        p99: Math.round(percentile(smallMs, 99)),
        max: Math.round(worst),
      },
      targetMs: TARGET_MS,
      met: worst <= TARGET_MS,
    }),
  );
} finally {
  await outboxd.stop();
}
