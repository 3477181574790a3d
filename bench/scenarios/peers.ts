// The peers measured in the same run (bench/peers/README.md): the seeds' reference design
// (Node + pg + PostgreSQL with a SKIP LOCKED publisher), pg-boss, and the bare limits.
import { arrivalRate, awaitArrivals, BUN, load, peakRssMb, type Range, startPeer } from "../lib.ts";

export const PEER_BODY = JSON.stringify({
  aggregate: "orders/o-[<id>]",
  data: { status: "paid", total: 1250 },
});

export interface PeerCommitRow {
  peer: string;
  connections: number;
  commitsPerSecond: Range;
  p99Ms: number;
  peakRssMb: number;
}

const PG_PEERS = {
  "pg-outbox (reference)": "bench/peers/pg-outbox.mjs",
  "pg-boss": "bench/peers/pgboss.mjs",
} as const;

/** Commit path alone (publisher off), like outboxd's "alone" rows. */
export async function peerCommits(options: {
  databaseUrl: string;
  connections: number[];
  seconds: number;
  runs: number;
}) {
  const rows: PeerCommitRow[] = [];
  for (const [peer, script] of Object.entries(PG_PEERS)) {
    const server = await startPeer(["node", script], { DATABASE_URL: options.databaseUrl, PUBLISH: "0" });
    try {
      for (const connections of options.connections) {
        const runs = [];
        for (let i = 0; i < options.runs; i++) {
          runs.push(
            await load({
              url: `${server.url}/commit`,
              connections,
              seconds: options.seconds,
              body: PEER_BODY,
            }),
          );
        }
        const values = runs.map((r) => r.requestsPerSecond).sort((a, b) => a - b);
        const median = values[Math.floor(values.length / 2)] as number;
        rows.push({
          peer,
          connections,
          commitsPerSecond: { median, min: values[0] as number, max: values.at(-1) as number },
          p99Ms: runs.find((r) => r.requestsPerSecond === median)?.latencyP99Ms ?? Number.NaN,
          peakRssMb: peakRssMb(server.pid),
        });
        console.error(`commit ${peer} c=${connections}: ${median}/s`);
      }
    } finally {
      await server.stop();
    }
  }
  // The HTTP limit: a bare Hono handler that parses the body and answers 201.
  const hono = await startPeer([BUN, "bench/peers/bare-hono.ts"], {});
  try {
    const result = await load({
      url: `${hono.url}/commit`,
      connections: 64,
      seconds: options.seconds,
      body: PEER_BODY,
    });
    rows.push({
      peer: "bare Hono handler (limit)",
      connections: 64,
      commitsPerSecond: {
        median: result.requestsPerSecond,
        min: result.requestsPerSecond,
        max: result.requestsPerSecond,
      },
      p99Ms: result.latencyP99Ms,
      peakRssMb: peakRssMb(hono.pid),
    });
  } finally {
    await hono.stop();
  }
  return rows;
}

export interface PeerDeliveryRow {
  peer: string;
  deliveries: number;
  /** From the first arrival to the last, as outboxd's row (bench/scenarios/delivery.ts). */
  seconds: number;
  deliveriesPerSecond: number;
  startupMs: number;
  ordered: boolean;
}

/** A prefilled backlog drained by each peer's publisher to the same kind of receiver. */
export async function peerDeliveries(options: { databaseUrl: string; total: number; aggregates: number }) {
  const rows: PeerDeliveryRow[] = [];
  for (const [peer, script] of Object.entries(PG_PEERS)) {
    const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
    try {
      // Fill with the publisher off, then time a publisher-on process draining it.
      const filler = await startPeer(["node", script], { DATABASE_URL: options.databaseUrl, PUBLISH: "0" });
      await fetch(`${filler.url}/prefill`, {
        method: "POST",
        body: JSON.stringify({ count: options.total, aggregates: options.aggregates }),
        headers: { "content-type": "application/json" },
      });
      await filler.stop();
      const spawned = Date.now();
      const publisher = await startPeer(["node", script], {
        DATABASE_URL: options.databaseUrl,
        RECEIVER_URL: `${receiver.url}/hook`,
      });
      let arrivals: { first: number; last: number };
      try {
        arrivals = await awaitArrivals(receiver.url, options.total, `${peer} to drain`);
      } finally {
        await publisher.stop();
      }
      rows.push({
        peer,
        deliveries: options.total,
        seconds: (arrivals.last - arrivals.first) / 1000,
        deliveriesPerSecond: arrivalRate(options.total, arrivals),
        startupMs: arrivals.first - spawned,
        ordered: false,
      });
      console.error(`delivery ${peer}: ${rows.at(-1)?.deliveriesPerSecond}/s`);
    } finally {
      await receiver.stop();
    }
  }
  return rows;
}

/** The one-shot limits: bare @libsql/client grouped commits and bare fetch at 64 in flight. */
/** One JSON line from a peer script run to completion (its last line of stdout). */
export async function runPeerScript(cmd: string[], env: Record<string, string>) {
  const proc = Bun.spawn({ cmd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
}

/**
 * Limits: the bare @libsql/client commit loop, and bare `fetch` to the receiver with 64 in
 * flight (the default global concurrency) and with 8 (the default per-endpoint concurrency: the
 * most one endpoint is sent at once with default settings).
 */
export async function limits(seconds: number) {
  const env = { DURATION: String(seconds) };
  const libsql = await runPeerScript([BUN, "bench/peers/bare-libsql.ts"], env);
  const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
  try {
    const fetch64 = await runPeerScript([BUN, "bench/peers/bare-fetch.ts"], {
      ...env,
      RECEIVER_URL: `${receiver.url}/hook`,
    });
    const fetch8 = await runPeerScript([BUN, "bench/peers/bare-fetch.ts"], {
      ...env,
      RECEIVER_URL: `${receiver.url}/hook`,
      INFLIGHT: "8",
    });
    return {
      bareLibsqlCommitsPerSecond: libsql.commitsPerSecond as number,
      bareFetchRequestsPerSecond: fetch64.requestsPerSecond as number,
      bareFetch8RequestsPerSecond: fetch8.requestsPerSecond as number,
    };
  } finally {
    await receiver.stop();
  }
}
