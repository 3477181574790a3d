// Pull endpoints (DESIGN §12), three measurements, each against outboxd `serve` as a
// separate process with its default settings:
//
// 1. Throughput: a backlog of TOTAL events over 1,000 aggregates on one pull endpoint, drained
//    by 4 pollers (one process, bench/load/pull-consumers.ts) in batches of 100: events/s from
//    the first poll to the last ack, with order checked by the consumers (no aggregate leased to
//    two pollers at once, sequences acked 1, 2, 3, …). Target ≥ 10,000 events/s, order kept.
//    Before it, unmeasured, the same consumers drain 5,000 events of a second pull endpoint: a
//    quick run's drain lasts about a second, and the server's first drain compiles the pull
//    path as it goes (its first polls and acks take ~100 ms instead of ~10).
//    The server's CPU time per 1,000 events is reported too (it does not depend on how long the
//    process waited for a core on a busy machine).
// 2. Stream latency: commits at 1,000/s (open loop, bench/load/fixed-rate.ts) addressed to a pull
//    endpoint read by one SSE consumer (bench/load/pull-stream.ts, acking every 2 ms): commit
//    response → arrival of the event on the stream. Target p99 ≤ 50 ms.
// 3. Idle streams: one server loaded with commits (autocannon, 64 connections) in blocks with
//    1,000 idle streams open (on a pull endpoint no commit reaches) and blocks without, round
//    after round in rotating order: commits/s and server CPU per commit (process and main
//    thread), paired per round. A third kind of block, without streams too, measured the same
//    way, gives the noise floor. Target: no measurable difference (within that noise).
//
//   npx bun bench/scenarios/pull.ts [--quick]       (alone; npm run bench -- --only=pull runs it too)
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { BUN, load, median, percentile, REPO, type Running, startOutboxd, TOKEN } from "../lib.ts";
import { COMMIT_BODY } from "./commit.ts";

const AGGREGATES = 1000;

export interface PullThroughputRow {
  total: number;
  pollers: number;
  max: number;
  seconds: number;
  eventsPerSecond: number;
  polls: number;
  emptyPolls: number;
  holdViolations: number;
  orderViolations: number;
  serverCpuMsPer1000: number;
  consumerCpuMsPer1000: number;
  loadAverage: number;
}

export interface PullStreamRow {
  rate: number;
  seconds: number;
  committed: number;
  errors: number;
  arrived: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  orderViolations: number;
  loadAverage: number;
}

export interface IdleStreamsRow {
  streams: number;
  closedEarly: number;
  commitsPerSecond: Record<"without" | "with" | "without (again)", number[]>;
  cpuMicrosPerCommit: Record<"without" | "with" | "without (again)", number[]>;
  mainThreadMicrosPerCommit: Record<"without" | "with" | "without (again)", number[]>;
  /** 1 - with/without, median of the rounds' ratios: what the idle streams cost commit throughput. */
  cost: number;
  /** with/without - 1 of CPU per commit, the same way. */
  cpuCost: number;
  /** The same for the main thread's CPU per commit. */
  mainThreadCost: number;
  /** The same three figures for two identical servers without streams: the noise floor. */
  noise: number;
  cpuNoise: number;
  mainThreadNoise: number;
  loadAverage: number;
}

export interface PullResults {
  throughput: PullThroughputRow[];
  stream: PullStreamRow[];
  idle: IdleStreamsRow;
}

/** User + system CPU seconds a process has used so far (/proc/PID/stat, clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const load1 = () => Math.round((loadavg()[0] ?? 0) * 10) / 10;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * A process of ours that speaks JSON lines on stdout: the next line, a stop that returns the last,
 * and for those that take commands, a line to send on stdin and an end (stdin closed).
 */
function jsonLines(cmd: string[], env: Record<string, string>) {
  const proc = Bun.spawn({
    cmd,
    cwd: REPO,
    env: { ...process.env, ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const next = async (): Promise<unknown> => {
    for (;;) {
      const end = buffer.indexOf("\n");
      if (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        return JSON.parse(line);
      }
      const { done, value } = await reader.read();
      if (done) throw new Error(`${cmd.join(" ")} ended without a line`);
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return {
    next,
    async stop(): Promise<unknown> {
      proc.kill("SIGTERM");
      const last = await next();
      await proc.exited;
      return last;
    },
    send(line: string): void {
      proc.stdin.write(`${line}\n`);
      proc.stdin.flush();
    },
    async end(): Promise<void> {
      proc.stdin.end();
      await proc.exited;
    },
    exited: proc.exited,
  };
}

async function pullEndpoint(server: Running, eventTypes?: string[]): Promise<string> {
  const answer = await server.api("POST", "/v1/endpoints", {
    kind: "pull",
    ...(eventTypes ? { eventTypes } : {}),
  });
  if (answer.status !== 201)
    throw new Error(`pull endpoint: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.id as string;
}

/** TOTAL events, 100 per commit, round-robin over the aggregates, 8 commits at a time. */
async function preload(server: Running, endpoint: string, total: number): Promise<void> {
  const commits = Math.ceil(total / 100);
  let next = 0;
  const worker = async () => {
    while (next < commits) {
      const c = next++;
      const events = Array.from({ length: Math.min(100, total - c * 100) }, (_, i) => ({
        type: "bench.pulled",
        aggregate: `bench/${(c * 100 + i) % AGGREGATES}`,
        payload: { n: c * 100 + i },
        endpoints: [endpoint],
      }));
      const answer = await server.api("POST", "/v1/commits", { events });
      if (answer.status !== 201) throw new Error(`preload: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** The consumer program draining `total` deliveries of `endpoint` (4 pollers × 100, order checked). */
function drain(server: Running, endpoint: string, total: number) {
  return jsonLines([BUN, "bench/load/pull-consumers.ts"], {
    URL: server.url,
    TOKEN,
    ENDPOINT: endpoint,
    TOTAL: String(total),
    POLLERS: "4",
    MAX: "100",
  });
}

/** Unmeasured: a first drain of this many events (of another endpoint) compiles the pull path. */
const WARM_UP = 5000;

export async function pullThroughput(options: { total: number }): Promise<PullThroughputRow> {
  const server = await startOutboxd();
  try {
    const endpoint = await pullEndpoint(server);
    const warmUp = await pullEndpoint(server);
    await preload(server, endpoint, options.total);
    await preload(server, warmUp, WARM_UP);
    const warming = drain(server, warmUp, WARM_UP);
    await warming.next();
    await warming.exited;
    const cpuBefore = cpuSeconds(server.pid);
    const consumers = drain(server, endpoint, options.total);
    const report = (await consumers.next()) as {
      acked: number;
      seconds: number;
      polls: number;
      emptyPolls: number;
      holdViolations: number;
      orderViolations: number;
      cpuSeconds: number;
    };
    await consumers.exited;
    const serverCpu = cpuSeconds(server.pid) - cpuBefore;
    const row: PullThroughputRow = {
      total: report.acked,
      pollers: 4,
      max: 100,
      seconds: round(report.seconds, 2),
      eventsPerSecond: Math.round(report.acked / report.seconds),
      polls: report.polls,
      emptyPolls: report.emptyPolls,
      holdViolations: report.holdViolations,
      orderViolations: report.orderViolations,
      serverCpuMsPer1000: round((serverCpu * 1e6) / report.acked),
      consumerCpuMsPer1000: round((report.cpuSeconds * 1e6) / report.acked),
      loadAverage: load1(),
    };
    console.error(
      `pull throughput: ${row.eventsPerSecond} events/s (${row.total} in ${row.seconds} s), server CPU ${row.serverCpuMsPer1000} ms/1000, ` +
        `order violations ${row.orderViolations}, hold violations ${row.holdViolations}, load ${row.loadAverage}`,
    );
    return row;
  } finally {
    await server.stop();
  }
}

export async function pullStreamLatency(options: { rate: number; seconds: number }): Promise<PullStreamRow> {
  const server = await startOutboxd();
  try {
    const endpoint = await pullEndpoint(server);
    const stream = jsonLines([BUN, "bench/load/pull-stream.ts"], {
      URL: server.url,
      TOKEN,
      ENDPOINT: endpoint,
      MAX: "500",
    });
    await stream.next(); // {"ready": true}
    const generator = Bun.spawn({
      cmd: [BUN, "bench/load/fixed-rate.ts"],
      cwd: REPO,
      env: {
        ...process.env,
        URL: server.url,
        TOKEN,
        RATE: String(options.rate),
        SECONDS: String(options.seconds),
        AGGREGATES: String(AGGREGATES),
        ENDPOINTS: endpoint,
      },
      stdout: "pipe",
      stderr: "inherit",
    });
    const report = JSON.parse((await new Response(generator.stdout).text()).trim()) as {
      ok: number;
      errors: number;
      responses: [string, number][];
    };
    await generator.exited;
    // Stragglers: at most 2 s more.
    await Bun.sleep(2000);
    const { arrivals, orderViolations } = (await stream.stop()) as {
      arrivals: [string, number][];
      orderViolations: number;
    };
    const arrivedAt = new Map(arrivals);
    const latencies = report.responses
      .map(([id, respondedAt]) => (arrivedAt.get(id) ?? Number.NaN) - respondedAt)
      .filter(Number.isFinite)
      // An event can reach the stream before its commit's response reaches the client: 0.
      .map((ms) => Math.max(0, ms));
    const row: PullStreamRow = {
      rate: options.rate,
      seconds: options.seconds,
      committed: report.ok,
      errors: report.errors,
      arrived: latencies.length,
      p50Ms: round(percentile(latencies, 50)),
      p95Ms: round(percentile(latencies, 95)),
      p99Ms: round(percentile(latencies, 99)),
      orderViolations,
      loadAverage: load1(),
    };
    console.error(
      `pull stream @${row.rate}/s: p50 ${row.p50Ms} ms, p95 ${row.p95Ms} ms, p99 ${row.p99Ms} ms, ${row.arrived}/${row.committed} arrived, load ${row.loadAverage}`,
    );
    return row;
  } finally {
    await server.stop();
  }
}

const IDLE_VARIANTS = ["without", "with", "without (again)"] as const;
type IdleVariant = (typeof IDLE_VARIANTS)[number];

/** User + system CPU seconds of a process's main thread (the one that runs JavaScript). */
function mainThreadCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * One server, measured in blocks of commits with and without `streams` idle streams open, the
 * three kinds of block in rotating order round after round; the "without (again)" blocks go
 * through the same motions as the others (the holder is asked to close streams it has not got)
 * and give the noise floor, measured the same way. Each block starts 2 s after the streams are
 * open (or closed); a block of at least the keepalive interval (15 s) holds each stream's first
 * keepalive (they were opened within a second or two), as steady state would in that time. Runs
 * in multiples of 3 give each kind of block each place in the rotation equally often.
 */
export async function idleStreams(options: {
  streams: number;
  seconds: number;
  runs: number;
}): Promise<IdleStreamsRow> {
  const server = await startOutboxd();
  let holder: ReturnType<typeof jsonLines> | undefined;
  try {
    // The streams wait on an endpoint no commit reaches: idle, as they would be at night. It
    // exists in every block: only the streams differ.
    const idle = await pullEndpoint(server, ["idle.never"]);
    holder = jsonLines([BUN, "bench/load/idle-streams.ts"], {
      URL: server.url,
      TOKEN,
      ENDPOINT: idle,
      // Bun's fetch holds at most 256 connections at once by default: the rest would queue forever.
      BUN_CONFIG_MAX_HTTP_REQUESTS: String(options.streams + 16),
    });
    const rps: Record<IdleVariant, number[]> = { without: [], with: [], "without (again)": [] };
    const cpu: Record<IdleVariant, number[]> = { without: [], with: [], "without (again)": [] };
    const mainCpu: Record<IdleVariant, number[]> = { without: [], with: [], "without (again)": [] };
    const commitLoad = () =>
      load({
        url: `${server.url}/v1/commits`,
        connections: 64,
        seconds: options.seconds,
        body: COMMIT_BODY,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    // Unmeasured: the first seconds of a process compile its code (JIT threads, more GC).
    await commitLoad();
    let closedEarly = 0;
    let streamsOpen = false;
    for (let r = 0; r < options.runs; r++) {
      // The order rotates per round, so no variant always runs first (or last) in a round.
      const order = IDLE_VARIANTS.map((_, i) => IDLE_VARIANTS[(i + r) % IDLE_VARIANTS.length] as IdleVariant);
      for (const variant of order) {
        if (variant === "with") {
          holder.send(`open ${options.streams}`);
          await holder.next(); // {"open": n}
          streamsOpen = true;
        } else {
          holder.send("close");
          closedEarly = ((await holder.next()) as { closedEarly: number }).closedEarly;
          streamsOpen = false;
        }
        // Opening or closing 1,000 streams is work of its own (and garbage): let it pass first.
        await Bun.sleep(2000);
        const before = cpuSeconds(server.pid);
        const mainBefore = mainThreadCpuSeconds(server.pid);
        const result = await commitLoad();
        rps[variant].push(result.requestsPerSecond);
        const commits = Math.max(1, result.requestsPerSecond * options.seconds);
        cpu[variant].push(Math.round(((cpuSeconds(server.pid) - before) * 1e6) / commits));
        mainCpu[variant].push(Math.round(((mainThreadCpuSeconds(server.pid) - mainBefore) * 1e6) / commits));
      }
    }
    if (streamsOpen) {
      holder.send("close");
      closedEarly = ((await holder.next()) as { closedEarly: number }).closedEarly;
    }
    const paired = (a: number[], b: number[]) => median(a.map((x, i) => x / Math.max(1, b[i] ?? 0)));
    const row: IdleStreamsRow = {
      streams: options.streams,
      closedEarly,
      commitsPerSecond: rps,
      cpuMicrosPerCommit: cpu,
      mainThreadMicrosPerCommit: mainCpu,
      cost: round(1 - paired(rps.with, rps.without), 3),
      cpuCost: round(paired(cpu.with, cpu.without) - 1, 3),
      mainThreadCost: round(paired(mainCpu.with, mainCpu.without) - 1, 3),
      noise: round(1 - paired(rps["without (again)"], rps.without), 3),
      cpuNoise: round(paired(cpu["without (again)"], cpu.without) - 1, 3),
      mainThreadNoise: round(paired(mainCpu["without (again)"], mainCpu.without) - 1, 3),
      loadAverage: load1(),
    };
    console.error(
      `idle streams (${row.streams}): commits/s without ${median(rps.without)} with ${median(rps.with)} again ${median(rps["without (again)"])} ` +
        `(cost ${row.cost}, noise ${row.noise}); CPU µs/commit without ${median(cpu.without)} with ${median(cpu.with)} ` +
        `(cost ${row.cpuCost}, noise ${row.cpuNoise}); main thread without ${median(mainCpu.without)} with ${median(mainCpu.with)} ` +
        `(cost ${row.mainThreadCost}, noise ${row.mainThreadNoise}); closed early ${closedEarly}; load ${row.loadAverage}`,
    );
    return row;
  } finally {
    await holder?.end();
    await server.stop();
  }
}

export async function pullScenario(quick: boolean): Promise<PullResults> {
  const throughput: PullThroughputRow[] = [];
  for (let r = 0; r < (quick ? 1 : 3); r++)
    throughput.push(await pullThroughput({ total: quick ? 10_000 : 50_000 }));
  const stream: PullStreamRow[] = [];
  for (let r = 0; r < (quick ? 1 : 3); r++) {
    stream.push(await pullStreamLatency({ rate: 1000, seconds: quick ? 3 : 10 }));
  }
  // A block lasts a keepalive interval (15 s) and then some: each stream's keepalive falls in it once.
  const idle = await idleStreams({ streams: 1000, seconds: 16, runs: quick ? 3 : 6 });
  return { throughput, stream, idle };
}

export function pullMarkdown(r: PullResults): string[] {
  const lines = ["## Pull endpoints", ""];
  lines.push("| events | pollers × max | events/s | server CPU ms / 1000 | order / hold violations | load |");
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const t of r.throughput) {
    lines.push(
      `| ${t.total} | ${t.pollers} × ${t.max} | ${t.eventsPerSecond} | ${t.serverCpuMsPer1000} | ${t.orderViolations} / ${t.holdViolations} | ${t.loadAverage} |`,
    );
  }
  lines.push(
    "",
    "| stream @ rate | arrived / committed | p50 ms | p95 ms | p99 ms | order violations | load |",
  );
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const s of r.stream) {
    lines.push(
      `| ${s.rate}/s | ${s.arrived} / ${s.committed} | ${s.p50Ms} | ${s.p95Ms} | ${s.p99Ms} | ${s.orderViolations} | ${s.loadAverage} |`,
    );
  }
  const i = r.idle;
  lines.push(
    "",
    `${i.streams} idle streams (${i.closedEarly} closed early), one server, blocks with and without them alternated: ` +
      `commits/s ${median(i.commitsPerSecond.without)} without, ${median(i.commitsPerSecond.with)} with (paired cost ${i.cost}); ` +
      `CPU µs per commit ${median(i.cpuMicrosPerCommit.without)} without, ${median(i.cpuMicrosPerCommit.with)} with ` +
      `(paired cost ${i.cpuCost}); main thread ${median(i.mainThreadMicrosPerCommit.without)} without, ` +
      `${median(i.mainThreadMicrosPerCommit.with)} with (paired cost ${i.mainThreadCost}); two kinds of block without ` +
      `streams differ by ${i.noise} (commits/s), ${i.cpuNoise} (CPU) and ${i.mainThreadNoise} (main thread): the noise floor; load ${i.loadAverage}.`,
    "",
    `Targets: ≥ 10,000 events/s with order kept (median ${median(r.throughput.map((t) => t.eventsPerSecond))}); ` +
      `stream p99 ≤ 50 ms at 1,000/s (median ${median(r.stream.map((s) => s.p99Ms))} ms).`,
    "",
  );
  return lines;
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  const result = await pullScenario(quick);
  console.log(pullMarkdown(result).join("\n"));
}
