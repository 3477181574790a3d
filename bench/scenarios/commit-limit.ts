// Commits alone against their limit, in this run: outboxd in process (`app.request`, no
// sockets) next to the bare Hono handler with the same grouped SQLite statements in process.
// Both synchronous=FULL, no endpoint. (That bare handler over HTTP, the limit of outboxd's HTTP
// figure, runs alternated with outboxd's own runs: bench/scenarios/commit.ts.)
//
// Both rates follow the WAL sync's latency, which on a shared disk moves from minute to minute
// (the same code measured 8,600-10,100/s in runs minutes apart): the two run in alternated pairs
// (A B, B A, …), each pair's ratio is taken in the same minute, and the row reports the median
// of those ratios. Each run first commits WARMUP seconds uncounted, so the figure is the steady
// state, not the JIT's first tens of thousands of commits.
import { BUN, type Range, rangeOf } from "../lib.ts";
import { runPeerScript } from "./peers.ts";

export interface CommitLimitRow {
  inProcess: Range;
  inProcessLimit: Range;
  /** outboxd / limit within each alternated pair. */
  ratio: Range;
  pairs: number;
  warmupSeconds: number;
}

export async function commitLimitScenario(options: {
  seconds: number;
  pairs: number;
  warmupSeconds: number;
}): Promise<CommitLimitRow> {
  const env = { DURATION: String(options.seconds), WARMUP: String(options.warmupSeconds), CONNECTIONS: "64" };
  const outboxd = async () =>
    (await runPeerScript([BUN, "bench/load/in-process-commits.ts"], env)).commitsPerSecond as number;
  const limit = async () =>
    (await runPeerScript([BUN, "bench/peers/bare-hono-sqlite.ts"], { ...env, IN_PROCESS: "1" }))
      .commitsPerSecond as number;
  const rates: number[] = [];
  const limits: number[] = [];
  const ratios: number[] = [];
  for (let pair = 0; pair < options.pairs; pair++) {
    let rate: number;
    let bound: number;
    if (pair % 2 === 0) {
      rate = await outboxd();
      bound = await limit();
    } else {
      bound = await limit();
      rate = await outboxd();
    }
    rates.push(rate);
    limits.push(bound);
    ratios.push(Math.round((rate / bound) * 1000) / 1000);
  }
  const row = {
    inProcess: rangeOf(rates, 0),
    inProcessLimit: rangeOf(limits, 0),
    ratio: rangeOf(ratios, 3),
    pairs: options.pairs,
    warmupSeconds: options.warmupSeconds,
  };
  console.error(
    `commits in process ${row.inProcess.median}/s (limit ${row.inProcessLimit.median}/s; ratio of ${row.pairs} alternated pairs ${row.ratio.median})`,
  );
  return row;
}
