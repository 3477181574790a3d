// Scenario 2: a backlog of pending deliveries over many aggregates, drained by a standalone
// dispatcher to a local receiver that answers 200 (optionally verifying every signature with
// the receiver snippet). Order per aggregate is kept throughout (the claim only takes heads).
import { join } from "node:path";
import { createOutboxd } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { newSecret } from "../../test/helpers/snippet-receiver.ts";
import {
  arrivalRate,
  awaitArrivals,
  BUN,
  peakRssMb,
  startOutboxd,
  startPeer,
  TOKEN,
  tempDir,
} from "../lib.ts";

export interface DeliveryRow {
  variant: string;
  /** The receiver verified every signature (the plain drain is the target's). */
  verified: boolean;
  deliveries: number;
  aggregates: number;
  /** From the first arrival to the last. */
  seconds: number;
  /** Between the first arrival and the last (the steady drain, as the limit is timed). */
  deliveriesPerSecond: number;
  /** From spawning `outboxd dispatch` to the first arrival. */
  startupMs: number;
  /** From spawning `outboxd dispatch` to the last arrival. */
  deliveriesPerSecondWithStartup: number;
  peakRssMb: number;
}

/** Commits `total` events over `aggregates` aggregates straight into a database file, no dispatcher. */
export async function prefill(
  dir: string,
  endpoint: { url: string; secret: string },
  total: number,
  aggregates: number,
  /** A libSQL server's URL instead of the file in `dir`. */
  databaseUrl?: string,
) {
  const outboxd = await createOutboxd(
    loadConfig({
      OUTBOXD_DATABASE_URL: databaseUrl ?? `file:${join(dir, "outboxd.db")}`,
      OUTBOXD_ADMIN_TOKEN: TOKEN,
      OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
      OUTBOXD_LOG_LEVEL: "error",
      OUTBOXD_RATE_LIMIT: "0",
      OUTBOXD_MAX_EVENTS_PER_COMMIT: "1000",
    }),
    { dispatch: false },
  );
  const request = (path: string, body: unknown) =>
    outboxd.http.request(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    });
  await request("/v1/endpoints", endpoint);
  const perCommit = 1000;
  const pending: (Response | Promise<Response>)[] = [];
  for (let i = 0; i < total; i += perCommit) {
    const events = Array.from({ length: Math.min(perCommit, total - i) }, (_, j) => ({
      type: "order.changed",
      aggregate: `orders/o-${(i + j) % aggregates}`,
      payload: { n: i + j },
    }));
    pending.push(request("/v1/commits", { events }));
    if (pending.length >= 8) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  await outboxd.stop();
}

export async function deliveryScenario(options: {
  total: number;
  aggregates: number;
  verify: boolean;
  /** Extra environment for the dispatcher (e.g. OUTBOXD_ENDPOINT_CONCURRENCY). */
  env?: Record<string, string>;
}): Promise<DeliveryRow> {
  const secret = newSecret();
  const receiver = await startPeer(
    [BUN, "bench/peers/receiver.ts"],
    options.verify ? { VERIFY_SECRET: secret } : {},
  );
  const dir = tempDir("outboxd-bench-delivery-");
  try {
    await prefill(dir, { url: `${receiver.url}/hook`, secret }, options.total, options.aggregates);
    const spawned = Date.now();
    const dispatcher = await startOutboxd(options.env ?? {}, "dispatch", dir);
    const arrivals = await awaitArrivals(receiver.url, options.total, "the backlog to drain");
    const row = {
      variant: options.verify ? "outboxd → receiver verifying signatures" : "outboxd → receiver",
      verified: options.verify,
      deliveries: options.total,
      aggregates: options.aggregates,
      seconds: (arrivals.last - arrivals.first) / 1000,
      deliveriesPerSecond: arrivalRate(options.total, arrivals),
      startupMs: arrivals.first - spawned,
      deliveriesPerSecondWithStartup: Math.round((options.total * 1000) / (arrivals.last - spawned)),
      peakRssMb: peakRssMb(dispatcher.pid),
    };
    await dispatcher.stop();
    console.error(
      `delivery ${row.variant}: ${row.deliveriesPerSecond}/s (start-up ${row.startupMs} ms; ${row.deliveriesPerSecondWithStartup}/s counting it)`,
    );
    return row;
  } finally {
    await receiver.stop();
  }
}
