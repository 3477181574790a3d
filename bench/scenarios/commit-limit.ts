// Commits alone against their limits, in this run: outboxd in process (`app.request`, no
// sockets) next to the bare Hono handler with the same grouped SQLite statements in process,
// and that bare handler over HTTP (autocannon, 64 connections) as the limit of outboxd's HTTP
// figure (bench/scenarios/commit.ts). All synchronous=FULL, no endpoint.
import { BUN, load, repeat, startPeer } from "../lib.ts";
import { COMMIT_BODY } from "./commit.ts";
import { runPeerScript } from "./peers.ts";

export interface CommitLimitRow {
  inProcess: { median: number; min: number; max: number };
  inProcessLimit: { median: number; min: number; max: number };
  httpLimit: { median: number; min: number; max: number };
}

const triple = (r: { median: number; min: number; max: number }) => ({
  median: r.median,
  min: r.min,
  max: r.max,
});

export async function commitLimitScenario(options: {
  seconds: number;
  runs: number;
}): Promise<CommitLimitRow> {
  const env = { DURATION: String(options.seconds), CONNECTIONS: "64" };
  const inProcess = await repeat(
    options.runs,
    () => runPeerScript([BUN, "bench/load/in-process-commits.ts"], env),
    (r) => r.commitsPerSecond as number,
  );
  const inProcessLimit = await repeat(
    options.runs,
    () => runPeerScript([BUN, "bench/peers/bare-hono-sqlite.ts"], { ...env, IN_PROCESS: "1" }),
    (r) => r.commitsPerSecond as number,
  );
  const peer = await startPeer([BUN, "bench/peers/bare-hono-sqlite.ts"], {});
  let httpLimit: Awaited<ReturnType<typeof repeat>>;
  try {
    httpLimit = await repeat(
      options.runs,
      () =>
        load({ url: `${peer.url}/v1/commits`, connections: 64, seconds: options.seconds, body: COMMIT_BODY }),
      (r) => r.requestsPerSecond,
    );
  } finally {
    await peer.stop();
  }
  const row = {
    inProcess: triple(inProcess),
    inProcessLimit: triple(inProcessLimit),
    httpLimit: triple(httpLimit),
  };
  console.error(
    `commits in process ${row.inProcess.median}/s (limit ${row.inProcessLimit.median}/s); HTTP limit ${row.httpLimit.median}/s`,
  );
  return row;
}
