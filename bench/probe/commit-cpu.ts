// CPU per commit in process, for A/B between checkouts on a shared machine: the app's fetch
// handler, 64 commits in flight (one record created, one event each: the commit benchmark's body),
// FULL, no endpoint. After WARMUP (2,048) commits of warm-up, blocks of 1,024: the main thread's
// CPU (JavaScript and SQLite) and the whole process's per commit, medians.
//   bun bench/probe/commit-cpu.ts [blocks=6]
//   ROOT=/path/to/other/checkout bun bench/probe/commit-cpu.ts    # the same probe on other code
// With ROOT_B, both checkouts run in this one process, their blocks alternated (A B, B A, …), so
// a busy machine weighs on both alike; it prints each one's median main-thread CPU per commit
// and the median of the per-pair ratios B/A (mean: the blocks with a WAL checkpoint count too).
//   ROOT_B=/path/to/other/checkout bun bench/probe/commit-cpu.ts [pairs=16]
// Two apps in one process were seen to favour the second one created by 2-9% (A/B and B/A both
// found B cheaper, session 8). With SEPARATE=1, each checkout runs in a process of its own
// instead, A B, B A, … for `pairs` pairs, each warmed by 32,768 commits first (the JIT compiles
// for the first tens of thousands); it prints the medians and the median per-pair ratio B/A.
//   SEPARATE=1 ROOT_B=/path/to/other/checkout bun bench/probe/commit-cpu.ts [pairs=6]
// KEYED=1: each commit sends an Idempotency-Key of its own, as the typed client does.
import { join } from "node:path";
import { alternated, inProcessOutboxd, median, probeChild } from "../lib.ts";

const TOKEN = "bench-commit-cpu-token";
const separate = process.env.SEPARATE === "1";
const blocks = Number(process.argv[2] ?? (process.env.ROOT_B ? (separate ? 6 : 16) : 6));
const warmup = Number(process.env.WARMUP ?? 2048);
const keyed = process.env.KEYED === "1";

async function outboxdAt(root: string) {
  const { COMMIT_BODY } = await import(join(root, "bench/scenarios/commit.ts"));
  const { outboxd, stop } = await inProcessOutboxd({
    token: TOKEN,
    root,
    env: { OUTBOXD_SYNCHRONOUS: "FULL" },
  });
  let next = 0;
  const commit = async () => {
    const body = COMMIT_BODY.replaceAll("[<id>]", String(next++));
    // With its Content-Length, as every HTTP client sends it (a Request made in process has none).
    const response = await outboxd.http.fetch(
      new Request("http://outboxd/v1/commits", {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKEN}`,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          ...(keyed ? { "idempotency-key": `probe-${next}` } : {}),
        },
        body,
      }),
    );
    if (response.status !== 201)
      throw new Error(`commit answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  const block = async (count: number) => {
    const thread = process.threadCpuUsage();
    const all = process.cpuUsage();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = 0; i < count / 64; i++) await commit();
      }),
    );
    const t = process.threadCpuUsage(thread);
    const a = process.cpuUsage(all);
    return { main: (t.user + t.system) / count, all: (a.user + a.system) / count };
  };
  return { block, stop };
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
const rootA = process.env.ROOT ?? join(import.meta.dir, "../..");

/** This probe's single mode on `root` in a child process: its median main-thread µs per commit. */
async function childMainUs(root: string): Promise<number> {
  const env = { ROOT: root, WARMUP: "32768", ROOT_B: undefined, SEPARATE: undefined };
  return (await probeChild(import.meta.path, ["8"], env)).mainThreadUsPerCommit as number;
}

if (process.env.ROOT_B && separate) {
  const rootB = process.env.ROOT_B;
  const [mainA, mainB] = await alternated(
    blocks,
    () => childMainUs(rootA),
    () => childMainUs(rootB),
  );
  const ratios = mainB.map((x, i) => x / (mainA[i] as number));
  console.log(
    JSON.stringify({
      a: rootA,
      b: rootB,
      mainUsA: +median(mainA).toFixed(1),
      mainUsB: +median(mainB).toFixed(1),
      ratioBtoA: +median(ratios).toFixed(3),
      pairs: mainA.map((x, i) => [x, mainB[i]]),
    }),
  );
} else if (process.env.ROOT_B) {
  const a = await outboxdAt(rootA);
  const b = await outboxdAt(process.env.ROOT_B);
  const mainA: number[] = [];
  const mainB: number[] = [];
  try {
    await a.block(2048);
    await b.block(2048);
    for (let i = 0; i < blocks; i++) {
      const order = i % 2 === 0 ? [a, b] : [b, a];
      for (const side of order) (side === a ? mainA : mainB).push((await side.block(1024)).main);
    }
  } finally {
    await a.stop();
    await b.stop();
  }
  const ratios = mainB.map((x, i) => x / (mainA[i] as number));
  console.log(
    JSON.stringify({
      a: rootA,
      b: process.env.ROOT_B,
      mainUsA: +median(mainA).toFixed(1),
      mainUsB: +median(mainB).toFixed(1),
      ratioBtoA: +median(ratios).toFixed(3),
      meanRatio: +(mean(mainB) / mean(mainA)).toFixed(3),
    }),
  );
} else {
  const one = await outboxdAt(rootA);
  const main: number[] = [];
  const all: number[] = [];
  try {
    await one.block(warmup);
    for (let i = 0; i < blocks; i++) {
      const used = await one.block(1024);
      main.push(used.main);
      all.push(used.all);
    }
  } finally {
    await one.stop();
  }
  console.log(
    JSON.stringify({
      root: rootA,
      mainThreadUsPerCommit: +median(main).toFixed(1),
      processUsPerCommit: +median(all).toFixed(1),
    }),
  );
}
