// Commits alone against their limit, in this run: outboxd in process (`app.request`, no
// sockets) next to the bare Hono handler with the same grouped SQLite statements in process.
// Both synchronous=FULL, no endpoint. (That bare handler over HTTP, the limit of outboxd's HTTP
// figure, runs alternated with outboxd's own runs: bench/scenarios/commit.ts.)
import { BUN, repeat } from "../lib.ts";
import { runPeerScript } from "./peers.ts";

export interface CommitLimitRow {
  inProcess: { median: number; min: number; max: number };
  inProcessLimit: { median: number; min: number; max: number };
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
  const row = {
    inProcess: triple(inProcess),
    inProcessLimit: triple(inProcessLimit),
  };
  console.error(`commits in process ${row.inProcess.median}/s (limit ${row.inProcessLimit.median}/s)`);
  return row;
}
