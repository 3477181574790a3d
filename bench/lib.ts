// Shared pieces of the benchmark scenarios: processes, load generation from a separate
// process (autocannon), peak RSS, and statistics. Everything listens on 127.0.0.1 and every
// load is bounded in time.
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Outboxd } from "../src/app.ts";
import { apiClient, type Request } from "../test/helpers/api.ts";
import { type Child, freePort, REPO, startChild } from "../test/helpers/process.ts";
import { tempDir } from "../test/helpers/server.ts";

export { freePort, REPO, tempDir };
export const BUN = process.execPath;
export const TOKEN = `bench-${crypto.randomUUID()}`;

export interface Running {
  child: Child;
  /** The folder of its database file. */
  dir: string;
  url: string;
  api: Request;
  pid: number;
  stop(): Promise<void>;
}

/**
 * outboxd in this process on a fresh database file, for probes that drive its fetch handler
 * (no sockets, no load generator on the cores): the code of the checkout at `root` (another
 * checkout for an A/B; this one by default), no rate limit, error logs only; `env` adds to or
 * overrides that. `stop()` ends it and removes its folder.
 */
export async function inProcessOutboxd(options: {
  token: string;
  env?: Record<string, string>;
  dispatch?: boolean;
  root?: string;
}): Promise<{ outboxd: Outboxd; stop(): Promise<void> }> {
  const root = options.root ?? REPO;
  const { createOutboxd } = await import(join(root, "src/app.ts"));
  const { loadConfig } = await import(join(root, "src/config.ts"));
  const dir = tempDir("outboxd-in-process-");
  const outboxd: Outboxd = await createOutboxd(
    loadConfig({
      OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
      OUTBOXD_ADMIN_TOKEN: options.token,
      OUTBOXD_LOG_LEVEL: "error",
      OUTBOXD_RATE_LIMIT: "0",
      ...options.env,
    }),
    { dispatch: options.dispatch ?? false },
  );
  return {
    outboxd,
    async stop() {
      await outboxd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
/**
 * outboxd `serve` (or another command) from source, on a fresh database unless one is given;
 * `runtime` are options for bun before the script (a `--preload`).
 */
export async function startOutboxd(
  env: Record<string, string> = {},
  command = "serve",
  dir = tempDir("outboxd-bench-"),
  runtime: string[] = [],
): Promise<Running> {
  const port = await freePort();
  const child = startChild([BUN, ...runtime, "src/main.ts", command], {
    PORT: String(port),
    OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
    OUTBOXD_ADMIN_TOKEN: TOKEN,
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OUTBOXD_RATE_LIMIT: "0",
    // A log line per request would cost what is being measured.
    OUTBOXD_LOG_LEVEL: "warn",
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  if (command === "serve") {
    await waitUntil(
      "outboxd to answer /healthz",
      () =>
        fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      60_000,
    );
  }
  return {
    child,
    dir,
    url,
    api: apiClient(url, TOKEN),
    pid: child.proc.pid,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A process that prints one JSON line `{"listening": url}` on stdout when ready. */
export async function startPeer(
  cmd: string[],
  env: Record<string, string>,
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const proc = Bun.spawn({
    cmd,
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PORT: "0", ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    const match = /\{"listening":\s*"([^"]+)"/.exec(text);
    if (match?.[1]) {
      // Keep draining stdout so the peer never blocks on a full pipe.
      void (async () => {
        for (;;) if ((await reader.read()).done) return;
      })();
      return {
        url: match[1],
        pid: proc.pid,
        async stop() {
          proc.kill("SIGTERM");
          await proc.exited;
        },
      };
    }
  }
  proc.kill("SIGKILL");
  throw new Error(`${cmd.join(" ")} did not report listening:\n${text}`);
}

/** Peak resident set size of a process so far, in MB (VmHWM). */
export function peakRssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, 100 ticks/s);
 * with `mainThread`, its main thread's alone (/proc/<pid>/task/<pid>/stat).
 */
export function cpuMs(pid: number, mainThread = false): number {
  const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** CPU ms of each thread of a process so far, by thread name (`main`: the process's own thread). */
export function threadCpuMs(pid: number): Record<string, number> {
  const threads: Record<string, number> = {};
  for (const { name, ms } of Object.values(taskCpuMs(pid))) threads[name] = (threads[name] ?? 0) + ms;
  return threads;
}

/**
 * CPU ms of each thread of a process so far, by thread id, with its name (`main`: the process's
 * own thread). By id, so that a difference of two readings is not skewed by a thread that ended.
 */
export function taskCpuMs(pid: number): Record<string, { name: string; ms: number }> {
  const tasks: Record<string, { name: string; ms: number }> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended since the listing
    }
    const name = tid === String(pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    tasks[tid] = { name, ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 };
  }
  return tasks;
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024);
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  errors: number;
  non2xx: number;
}

/**
 * autocannon in its own process: `[<id>]` in the body becomes a unique id per request. Several
 * URLs: the connections go to them in turn.
 */
export async function load(options: {
  url: string | string[];
  connections: number;
  seconds: number;
  body: string;
  headers?: Record<string, string>;
}): Promise<LoadResult> {
  const cmd = [
    // bench/package.json, installed by `npm run bench` (bench:deps), not by the root install.
    join(REPO, "bench/node_modules/.bin/autocannon"),
    "--json",
    "-c",
    String(options.connections),
    "-d",
    String(options.seconds),
    "-m",
    "POST",
    "-I",
    "-H",
    "content-type=application/json",
    ...Object.entries(options.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}=${v}`]),
    "-b",
    options.body,
    ...(Array.isArray(options.url) ? options.url : [options.url]),
  ];
  const run = Bun.spawn({ cmd, stdout: "pipe", stderr: "pipe" });
  const out = await new Response(run.stdout).text();
  await run.exited;
  const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
  return {
    requestsPerSecond: Math.round((result["2xx"] ?? 0) / options.seconds),
    latencyP50Ms: result.latency?.p50 ?? Number.NaN,
    latencyP99Ms: result.latency?.p99 ?? Number.NaN,
    errors: result.errors ?? 0,
    non2xx: result.non2xx ?? 0,
  };
}

/**
 * A closed-loop load from this process, for as long as it runs: `connections` requests in flight,
 * each followed by the next as soon as it is answered, counted as they are answered (so a
 * measurement can read the count at any instant, unlike autocannon's one total at the end).
 * `[<id>]` in the body becomes a unique id per request, as autocannon's -I does.
 */
export function saturate(options: {
  url: string;
  connections: number;
  body: string;
  headers?: Record<string, string>;
}): { answered(): number; failed(): number; stop(): Promise<void> } {
  const headers = { "content-type": "application/json", ...options.headers };
  const runId = crypto.randomUUID().slice(0, 8);
  let next = 0;
  let answered = 0;
  let failed = 0;
  let running = true;
  const loop = async () => {
    while (running) {
      const body = options.body.replaceAll("[<id>]", `${runId}-${next++}`);
      try {
        const response = await fetch(options.url, { method: "POST", headers, body });
        await response.arrayBuffer();
        if (response.ok) answered += 1;
        else failed += 1;
      } catch {
        failed += 1;
      }
    }
  };
  const loops = Array.from({ length: options.connections }, loop);
  return {
    answered: () => answered,
    failed: () => failed,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** This VM's CPU times from /proc/stat (all cores, clock ticks); null where there is none. */
export function cpuTimes(): { steal: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] as string;
    // cpu  user nice system idle iowait irq softirq steal (guest time is inside user)
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return { steal: ticks[7] ?? 0, total: ticks.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/**
 * The share of this VM's CPU time (%) the hypervisor gave to other guests between two readings:
 * on a shared host it slows every figure of a run, limits included, so the bench prints it.
 */
export function stealPercent(
  before: ReturnType<typeof cpuTimes>,
  after: ReturnType<typeof cpuTimes>,
): number | null {
  if (!before || !after || after.total <= before.total) return null;
  return Math.round(((after.steal - before.steal) / (after.total - before.total)) * 1000) / 10;
}

/** A median with its range. */
export type Range = { median: number; min: number; max: number };

/**
 * The median of some values and their range; with `decimals`, each rounded to that many places
 * (an even count's median is a mean of two, so it can have more than the values).
 */
export function rangeOf(values: number[], decimals?: number): Range {
  const round = (x: number) => (decimals === undefined ? x : Math.round(x * 10 ** decimals) / 10 ** decimals);
  return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
}

/** Runs `measure` `runs` times and reports the median and range of `pick`. */
export async function repeat<T>(runs: number, measure: () => Promise<T>, pick: (t: T) => number) {
  const results: T[] = [];
  for (let i = 0; i < runs; i++) results.push(await measure());
  return { ...rangeOf(results.map(pick)), runs: results };
}

export async function waitUntil(
  what: string,
  condition: () => Promise<boolean>,
  timeoutMs: number,
): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
  return performance.now() - started;
}

/**
 * Waits until the bench receiver (bench/peers/receiver.ts) has counted `total` deliveries, and
 * returns its first and last arrival (ms epoch). A drain's rate is timed between the two, as the
 * bare-fetch limit beside it is timed in its steady state; the start-up before the first arrival
 * is reported apart (for outboxd: a process start, its migrations check and the first claim).
 */
export async function awaitArrivals(
  receiverUrl: string,
  total: number,
  what: string,
): Promise<{ first: number; last: number }> {
  let seen: { count: number; first: number | null; last: number | null } = {
    count: 0,
    first: null,
    last: null,
  };
  await waitUntil(
    what,
    async () => {
      seen = (await (await fetch(`${receiverUrl}/count`)).json()) as typeof seen;
      return seen.count >= total;
    },
    600_000,
  );
  return { first: seen.first ?? Number.NaN, last: seen.last ?? Number.NaN };
}

/** Deliveries per second between the first and the last of `total` arrivals. */
export function arrivalRate(total: number, arrivals: { first: number; last: number }): number {
  return Math.round(((total - 1) * 1000) / Math.max(1, arrivals.last - arrivals.first));
}

/**
 * A probe script run again in a child process, with `env` over this one's (an undefined value
 * removes the variable): its last line on stdout, as JSON. The probes' separate-process A/Bs
 * (commit-cpu.ts SEPARATE=1, commit-op-cpu.ts ROOT_B) alternate such children.
 */
export async function probeChild(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<Record<string, unknown>> {
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...env }))
    if (value !== undefined) merged[key] = value;
  const child = Bun.spawn([process.execPath, script, ...args], {
    env: merged,
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(child.stdout).text();
  if ((await child.exited) !== 0)
    throw new Error(`${script} ${args.join(" ")} failed (${JSON.stringify(env)})`);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
}

/** `pairs` alternated runs of two measures (A B, then B A, …): each side's figures, pair by pair. */
export async function alternated(
  pairs: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<[a: number[], b: number[]]> {
  const figures: [number[], number[]] = [[], []];
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
    for (const side of order) figures[side].push(await (side === 0 ? a : b)());
  }
  return figures;
}
