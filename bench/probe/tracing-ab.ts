// Tracing's cost at saturation, A/B in the same minutes (issue 18): several outboxd instances at
// once, loaded in turn (64 connections, every commit with a sampled traceparent, NORMAL
// durability), rounds with a rotating order; each variant's commits/s and CPU µs per commit
// (user + system from /proc, all threads: exporter and garbage collector included), with the
// median of its paired ratios to "off" of the same round.
//   bun bench/probe/tracing-ab.ts [seconds=3] [rounds=5] [endpoint=0|1]
// Variants (VARIANTS=a,b,… picks some): off, on, on-sampled-off (OTEL_TRACES_SAMPLER=always_off),
// off-again (noise floor), and with OLD=<dir of another checkout> old-on / old-off, the same
// variants served from that tree (e.g. `git archive <commit> | tar -x -C dir`, node_modules linked).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { apiClient } from "../../test/helpers/api.ts";
import { freePort, startChild } from "../../test/helpers/process.ts";
import { BUN, cpuMs, load, median, REPO, startPeer, TOKEN, tempDir } from "../lib.ts";
import { COMMIT_BODY } from "../scenarios/commit.ts";

const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 5);
const withEndpoint = process.argv[4] === "1";
const old = process.env.OLD;

const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const on = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "outboxd-bench" };
const variants: Record<string, { env: Record<string, string>; tree: string }> = {
  off: { env: {}, tree: REPO },
  on: { env: on, tree: REPO },
  "on-sampled-off": { env: { ...on, OTEL_TRACES_SAMPLER: "always_off" }, tree: REPO },
  "off-again": { env: {}, tree: REPO },
};
if (old) {
  variants["old-on"] = { env: on, tree: old };
  variants["old-off"] = { env: {}, tree: old };
}
const names = (process.env.VARIANTS ?? "off,on,off-again").split(",");

async function start(name: string) {
  const variant = variants[name];
  if (!variant) throw new Error(`unknown variant ${name}`);
  const port = await freePort();
  const dir = tempDir("outboxd-tracing-ab-");
  const child = startChild(
    [BUN, join(variant.tree, "src/main.ts"), "serve"],
    {
      PORT: String(port),
      OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
      OUTBOXD_ADMIN_TOKEN: TOKEN,
      OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
      OUTBOXD_RATE_LIMIT: "0",
      OUTBOXD_LOG_LEVEL: "warn",
      OUTBOXD_SYNCHRONOUS: "NORMAL",
      ...variant.env,
    },
    variant.tree,
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await Bun.sleep(100);
  }
  return {
    url,
    pid: child.proc.pid,
    api: apiClient(url, TOKEN),
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** CPU ms by thread name (/proc/PID/task), summed over threads of the same name. */
function threadsMs(pid: number): Record<string, number> {
  const threads: Record<string, number> = {};
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      threads[name] = (threads[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // the thread ended
    }
  }
  return threads;
}

/** CPU ms of a process's main thread (its first task): JavaScript, SQLite, HTTP; no GC helpers or JIT. */
function mainThreadMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const servers = await Promise.all(names.map(start));
try {
  if (withEndpoint) {
    for (const server of servers) await server.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
  }
  const cps: number[][] = names.map(() => []);
  const cpu: number[][] = names.map(() => []);
  const mainCpu: number[][] = names.map(() => []);
  // CPU µs per commit by thread name, summed over the rounds (THREADS=1 prints it).
  const byThread: Record<string, number>[] = names.map(() => ({}));
  const allCommits: number[] = names.map(() => 0);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const i = (k + round) % names.length;
      const server = servers[i];
      if (!server) continue;
      const before = cpuMs(server.pid);
      const mainBefore = mainThreadMs(server.pid);
      const threadsBefore = threadsMs(server.pid);
      const result = await load({
        url: `${server.url}/v1/commits`,
        connections: 64,
        seconds,
        body: COMMIT_BODY,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        },
      });
      // The deliveries and the last export of this window are its own cost.
      if (withEndpoint) await Bun.sleep(300);
      cps[i]?.push(result.requestsPerSecond);
      const commits = Math.max(1, result.requestsPerSecond * seconds);
      cpu[i]?.push(((cpuMs(server.pid) - before) * 1000) / commits);
      mainCpu[i]?.push(((mainThreadMs(server.pid) - mainBefore) * 1000) / commits);
      const threadsAfter = threadsMs(server.pid);
      const sums = byThread[i] ?? {};
      for (const [name, ms] of Object.entries(threadsAfter))
        sums[name] = (sums[name] ?? 0) + ms - (threadsBefore[name] ?? 0);
      allCommits[i] = (allCommits[i] ?? 0) + commits;
    }
  }
  const offAt = names.indexOf("off");
  const ratio = (xs: number[], base: number[]) =>
    +(median(xs.map((x, r) => x / (base[r] ?? x))) - 1).toFixed(3);
  const report = Object.fromEntries(
    names.map((name, i) => [
      name,
      {
        commitsPerSecond: Math.round(median(cps[i] ?? [])),
        vsOff: offAt >= 0 ? ratio(cps[i] ?? [], cps[offAt] ?? []) : null,
        cpuMicrosPerCommit: Math.round(median(cpu[i] ?? [])),
        cpuVsOff: offAt >= 0 ? ratio(cpu[i] ?? [], cpu[offAt] ?? []) : null,
        mainThreadMicrosPerCommit: Math.round(median(mainCpu[i] ?? [])),
        mainThreadVsOff: offAt >= 0 ? ratio(mainCpu[i] ?? [], mainCpu[offAt] ?? []) : null,
        cps: cps[i],
        cpu: (cpu[i] ?? []).map(Math.round),
      },
    ]),
  );
  console.log(JSON.stringify({ seconds, rounds, endpoint: withEndpoint, report }, null, 1));
  if (process.env.THREADS) {
    names.forEach((name, i) => {
      const perCommit = Object.entries(byThread[i] ?? {})
        .map(([thread, ms]) => `${thread} ${((ms * 1000) / Math.max(1, allCommits[i] ?? 0)).toFixed(1)}`)
        .join(", ");
      console.error(`${name}: CPU µs per commit by thread: ${perCommit}`);
    });
  }
} finally {
  for (const server of servers) await server.stop();
  await receiver.stop();
  await sink.stop();
}
