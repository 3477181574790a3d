// Commits over HTTP (64 connections, FULL, no endpoint) against their limit, alternated in the
// same minutes: outboxd and the bare Hono handler with the same grouped statements
// (bench/peers/bare-hono-sqlite.ts) both running, loaded in turn by autocannon; per run its
// rate and the server's CPU per commit (all threads, and its main thread's), per pair outboxd / limit (the ratio the
// bench measures minutes apart). With PERF=1, each run also counts the server's fdatasync
// calls and their mean time (perf trace, kernel tracepoints: no slowdown to speak of).
//   bun bench/probe/commit-ratio.ts [pairs=4] [seconds=3] [KEY=VALUE env for outboxd …]
import { BUN, cpuMs, load, startOutboxd, startPeer, TOKEN } from "../lib.ts";
import { COMMIT_BODY } from "../scenarios/commit.ts";

const pairs = Number(process.argv[2] ?? 4);
const seconds = Number(process.argv[3] ?? 3);
const env = Object.fromEntries(process.argv.slice(4).map((kv) => kv.split("=", 2) as [string, string]));
const outboxd = await startOutboxd({ OUTBOXD_SYNCHRONOUS: "FULL", ...env });
const limit = await startPeer([BUN, "bench/peers/bare-hono-sqlite.ts"], {});

async function syncs<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ value: T; count: number; meanUs: number }> {
  if (!process.env.PERF) return { value: await work(), count: Number.NaN, meanUs: Number.NaN };
  // perf trace (kernel tracepoints, no ptrace): every thread's fdatasync calls and their times.
  const perf = Bun.spawn(["perf", "trace", "-s", "-e", "fdatasync", "-p", String(pid)], {
    stderr: "pipe",
    stdout: "pipe",
  });
  await Bun.sleep(500);
  const value = await work();
  perf.kill("SIGINT");
  const text = (await new Response(perf.stderr).text()) + (await new Response(perf.stdout).text());
  let count = 0;
  let totalMs = 0;
  for (const row of text.matchAll(/^\s*fdatasync\s+(\d+)\s+\d+\s+([\d.]+)/gm)) {
    count += Number(row[1]);
    totalMs += Number(row[2]);
  }
  return { value, count, meanUs: Math.round((totalMs * 1000) / Math.max(1, count)) };
}

async function run(who: "outboxd" | "limit") {
  const target = who === "outboxd" ? { url: outboxd.url, pid: outboxd.pid } : limit;
  const before = cpuMs(target.pid);
  const beforeMain = cpuMs(target.pid, true);
  const { value, count, meanUs } = await syncs(target.pid, () =>
    load({
      url: `${target.url}/v1/commits`,
      connections: 64,
      seconds,
      body: COMMIT_BODY,
      headers: { authorization: `Bearer ${TOKEN}` },
    }),
  );
  const commits = value.requestsPerSecond * seconds;
  return {
    who,
    perSecond: value.requestsPerSecond,
    cpuUsPerCommit: Math.round(((cpuMs(target.pid) - before) * 1000) / Math.max(1, commits)),
    mainUsPerCommit: Math.round(((cpuMs(target.pid, true) - beforeMain) * 1000) / Math.max(1, commits)),
    syncs: count,
    commitsPerSync: +(commits / count).toFixed(1),
    syncUs: meanUs,
  };
}

const ratios: number[] = [];
try {
  // Warm both (JIT, first pages) before measuring.
  await run("outboxd");
  await run("limit");
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? (["outboxd", "limit"] as const) : (["limit", "outboxd"] as const);
    const rows = [];
    for (const who of order) rows.push(await run(who));
    const o = rows.find((r) => r.who === "outboxd");
    const l = rows.find((r) => r.who === "limit");
    ratios.push((o?.perSecond ?? 0) / (l?.perSecond ?? 1));
    console.log(JSON.stringify(rows));
  }
} finally {
  await outboxd.stop();
  await limit.stop();
}
const sorted = [...ratios].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    env,
    ratios: ratios.map((r) => +r.toFixed(2)),
    median: +(sorted[sorted.length >> 1] ?? 0).toFixed(2),
  }),
);
