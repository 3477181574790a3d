// Scenario: outboxd on a real libSQL server (sqld 0.24 on 127.0.0.1, test/helpers/sqld.ts), every
// `serve` and `dispatch` talking to it over HTTP with @libsql/client, and test/helpers/network.ts
// delaying every request a fixed round trip first and counting it. A real network adds bandwidth
// and TLS, which this does not model; the server's CPU is reported apart from outboxd's, since on
// a real deployment it runs on another machine while here it shares this one's cores.
//  - commits/s at 64 connections with one `serve` process, and with two sharing the database
//    (32 connections each), with the round trips each group commit cost;
//  - deliveries/s of a backlog drained by one `dispatch` process over the same network, with
//    the order per aggregate checked at the receiver.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { newSecret } from "../../test/helpers/snippet-receiver.ts";
import { type Sqld, startSqld } from "../../test/helpers/sqld.ts";
import { startTcpProxy, type TcpProxy } from "../../test/helpers/tcp-proxy.ts";
import {
  BUN,
  cpuMs,
  load,
  REPO,
  type Running,
  startOutboxd,
  TOKEN,
  tempDir,
  threadCpuMs,
  waitUntil,
} from "../lib.ts";
import { COMMIT_BODY } from "./commit.ts";
import { prefill } from "./delivery.ts";
import { type CommitLimit, commitLimit } from "./remote-limit.ts";

const PRELOAD = ["--preload", "./test/helpers/network-preload.ts"];

export interface RemoteCommitRow {
  serves: number;
  connections: number;
  roundTripMs: number;
  commitsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /**
   * Requests per group commit, as the remote write path counts them (remote-writer.ts `stats`:
   * every request of the groups that read, i.e. not the dispatcher's claims and completions):
   * 2, also when the ledger's chain goes under the write lock (the reads take it), more after failed guards.
   */
  roundTripsPerGroup: number;
  /** Groups whose chain went under the write lock (machines racing for it), per 100 groups. */
  lockedPercent: number;
  commitsPerGroup: number;
  /** Requests outside group commits (the sweep's transactions, clock readings, token touches). */
  otherRequestsPerSecond: number;
  /** Statements per commit in the group commits' batches (reads, guards, writes). */
  statementsPerCommit: number;
  /** Time the database spent running the group commits' batches, per group (ms). */
  databaseMsPerGroup: number;
  /** Write batches that failed (a guard: another serve wrote first), per 100 write batches. */
  failedWritesPercent: number;
  /** CPU of the `serve` processes per commit (µs), the server's work excluded. */
  serveCpuUsPerCommit: number;
  /** The same, each `serve` process apart (µs per commit of the whole load). */
  serveCpuUsPerCommitEach: number[];
  /** Of the serves' CPU, their main threads' (µs per commit): the rest is JIT, GC and I/O threads. */
  serveMainThreadUsPerCommit: number;
  /** The serves' other threads by name, µs per commit (the larger ones). */
  serveThreadsUsPerCommit: Record<string, number>;
  /** CPU of the libSQL server (sqld) per commit (µs): every request's execution on the database. */
  serverCpuUsPerCommit: number;
  /** The server's threads by name, µs per commit. */
  serverThreadsUsPerCommit: Record<string, number>;
  /** The whole machine's idle share during the load (all processes, other users' included), %. */
  machineIdlePercent: number;
  /**
   * The server's write lock during the load (not reported by sqld: empty): its turns per second, how long a turn held
   * it (ms), and the share of the time it was held (%): near 100, the lock bounds the rate.
   */
  lockTurnsPerSecond: number;
  lockMsPerTurn: number;
  lockBusyPercent: number;
  /** Of a turn, the time the server ran its statements (ms); the rest the holder's round trip and work. */
  lockWorkMsPerTurn: number;
  /**
   * A locked group's time (ms, mean; remote-writer.ts stats): gathering after the group before,
   * its locked reads (round trip and wait for the lock), building its batch (the lock held), and
   * the batch until its durable answer. Their sum is one serve's cycle.
   */
  lockedGroupMs: { gather: number; reads: number; build: number; commit: number };
  /** Of the locked groups, the share that started with their gathering's target reached (%), not at its deadline. */
  gatheredFullPercent: number;
  /** Commits each serve answered in the warm-up (0: a warm-up given in seconds). */
  warmUpCommitsEach: number[];
  /** What `outboxd verify` said of the ledger's chain after the load (first line). */
  ledger: string;
}

export interface RemoteDeliveryRow {
  roundTripMs: number;
  deliveries: number;
  aggregates: number;
  deliveriesPerSecond: number;
  orderViolations: number;
  roundTripsPerSecond: number;
  /** Share of the drain's wall time the database spent executing its requests. */
  databaseBusy: number;
  /** CPU of the `dispatch` process per delivery (µs), and of its threads by name. */
  dispatchCpuUsPerDelivery: number;
  dispatchThreadsUsPerDelivery: Record<string, number>;
  /** CPU of the libSQL server per delivery (µs), and of its threads by name. */
  serverCpuUsPerDelivery: number;
  serverThreadsUsPerDelivery: Record<string, number>;
  /** The whole machine's idle share during the drain, %. */
  machineIdlePercent: number;
}

type Counts = Record<string, number>;
/** What test/helpers/network-preload.ts writes: requests, their statements, the database's time. */
type Network = { counts: Counts; statements: Counts; serverMs: Counts; failed: Counts; writer: Counts };

function readNetwork(file: string): Network {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Network;
  } catch {
    return { counts: {}, statements: {}, serverMs: {}, failed: {}, writer: {} };
  }
}

function minus(after: Counts, before: Counts): Counts {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

function delta(after: Network, before: Network): Network {
  return {
    counts: minus(after.counts, before.counts),
    statements: minus(after.statements, before.statements),
    serverMs: minus(after.serverMs, before.serverMs),
    failed: minus(after.failed ?? {}, before.failed ?? {}),
    writer: minus(after.writer ?? {}, before.writer ?? {}),
  };
}

/**
 * A serve's or dispatcher's environment: its database is `url` (the server, or the delay proxy in
 * front of it); test/helpers/network-preload.ts only counts the requests (no simulated delay).
 */
function networkEnv(statsFile: string, url: string): Record<string, string> {
  return {
    OUTBOXD_SIMULATED_RTT_MS: "0",
    OUTBOXD_SIMULATED_NETWORK_STATS: statsFile,
    OUTBOXD_DATABASE_URL: url,
  };
}

/** A real sqld, and a delay proxy in front of it when a round trip is to be added. */
async function startDatabase(
  roundTripMs: number,
): Promise<{ server: Sqld; proxy: TcpProxy | null; url: string }> {
  const server = await startSqld();
  const proxy =
    roundTripMs > 0 ? await startTcpProxy({ host: "127.0.0.1", port: server.port }, roundTripMs / 2) : null;
  return { server, proxy, url: proxy?.url ?? server.url };
}

/**
 * Commits each serve process answers before the measurement. JavaScriptCore keeps compiling a
 * serve's hot code for its first ~12,000-15,000 commits: one serve alone, at load 13-16, 5 s
 * windows: its JIT threads' CPU 120-340 µs per commit over the first 12,000, 30-57 after 15,000,
 * and its main thread 250-275 then 200-235. With a warm-up in seconds, two serves
 * (each answering half of one's commits per second) were measured earlier on that curve than
 * one, each paying its own compiles: JIT 135 µs per commit against one serve's 71 on a quiet
 * machine.
 */
const WARM_UP_COMMITS = 15_000;
/** The warm-up's load goes in steps of this long, until each serve has answered WARM_UP_COMMITS… */
const WARM_UP_STEP_SECONDS = 3;
/** …or for this long at most (a starved machine). */
const MAX_WARM_UP_SECONDS = 45;

export async function remoteCommitScenario(options: {
  seconds: number;
  roundTripMs: number;
  serves: number;
  connections: number;
  /**
   * Unmeasured load first (JIT), this long; unless given, until each serve process has answered
   * `warmUpCommits` (WARM_UP_COMMITS), at most MAX_WARM_UP_SECONDS.
   */
  warmUpSeconds?: number;
  warmUpCommits?: number;
  /** Writes a CPU profile of each `serve` (bun --cpu-prof) into this folder. */
  profileDir?: string;
}): Promise<RemoteCommitRow> {
  const dir = tempDir("outboxd-bench-remote-");
  const stats = Array.from({ length: options.serves }, (_, i) => join(dir, `network-${i}.json`));
  const profile = cpuProfile(options.profileDir);
  const { server, proxy, url } = await startDatabase(options.roundTripMs);
  const serves: Running[] = [];
  // One after the other: the first applies the migrations.
  for (const file of stats) {
    serves.push(await startOutboxd(networkEnv(file, url), "serve", dir, [...profile, ...PRELOAD]));
  }
  try {
    const perServe = Math.max(1, Math.round(options.connections / options.serves));
    // One load process for all serves (autocannon spreads its connections over the URLs in
    // turn): the load's own CPU the same with one serve as with two. With a process per serve, two
    // serves shared the cores with two load generators, each paying its own start and JIT in
    // every run of a few seconds.
    const loadAll = (seconds: number) =>
      load({
        url: serves.map((serve) => `${serve.url}/v1/commits`),
        connections: perServe * serves.length,
        seconds,
        body: COMMIT_BODY,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    // First the same load, not measured: each process compiles its hot code (JIT) then, until it
    // has answered WARM_UP_COMMITS (see there): a process measured earlier pays its compiles in
    // the window, and two serves, each answering half the commits of one, would pay them twice
    // per commit, a cost of the run's length, not of running two Machines.
    const warmedUp = serves.map(() => 0);
    if (options.warmUpSeconds !== undefined) await loadAll(options.warmUpSeconds);
    else {
      const started = performance.now();
      const enough = options.warmUpCommits ?? WARM_UP_COMMITS;
      while (Math.min(...warmedUp) < enough && performance.now() - started < MAX_WARM_UP_SECONDS * 1000) {
        const step = await loadAll(WARM_UP_STEP_SECONDS);
        // (Each serve has as many connections: about as many commits.)
        warmedUp.forEach((n, i) => {
          warmedUp[i] = n + Math.round((step.requestsPerSecond * WARM_UP_STEP_SECONDS) / serves.length);
        });
      }
    }
    // The counts are written every 250 ms: wait for a fresh file before and after the load.
    await Bun.sleep(600);
    const before = stats.map(readNetwork);
    const cpuBefore = serves.map((serve) => cpuMs(serve.pid));
    const threadsBefore = serves.map((serve) => threadCpuMs(serve.pid));
    const serverCpuBefore = server ? cpuMs(server.pid) : 0;
    const serverThreadsBefore = threadCpuMs(server.pid);
    const lockBefore = null as LockStats | null;
    const loadStarted = performance.now();
    const idleBefore = machineIdle();
    const result = await loadAll(options.seconds);
    const idleAfter = machineIdle();
    const loadMs = performance.now() - loadStarted;
    const lockAfter = null as LockStats | null;
    const turns = lockBefore && lockAfter ? lockAfter.turns - lockBefore.turns : 0;
    const heldMs = lockBefore && lockAfter ? lockAfter.heldMs - lockBefore.heldMs : 0;
    const workMs = lockBefore && lockAfter ? lockAfter.workMs - lockBefore.workMs : 0;
    const cpuEach = serves.map((serve, i) => cpuMs(serve.pid) - (cpuBefore[i] ?? 0));
    const cpu = cpuEach.reduce((a, b) => a + b, 0);
    const threads: Record<string, number> = {};
    serves.forEach((serve, i) => {
      const before = threadsBefore[i] ?? {};
      for (const [name, ms] of Object.entries(threadCpuMs(serve.pid)))
        threads[name] = (threads[name] ?? 0) + ms - (before[name] ?? 0);
    });
    const serverCpu = server ? cpuMs(server.pid) - serverCpuBefore : 0;
    const serverThreads = server
      ? Object.entries(threadCpuMs(server.pid)).map(
          ([name, ms]) => [name, ms - (serverThreadsBefore[name] ?? 0)] as const,
        )
      : [];
    await Bun.sleep(600);
    const used = stats.map((file, i) => delta(readNetwork(file), before[i] ?? readNetwork("")));
    const sumOf = (part: keyof Network, key: string) => used.reduce((n, c) => n + (c[part][key] ?? 0), 0);
    const sum = (key: string) => sumOf("counts", key);
    const groups = sumOf("writer", "readingGroups");
    const requests = sumOf("writer", "readingGroupRequests");
    // Each locked group's 2 requests are interactive-transaction requests: not "other".
    const locked = sumOf("writer", "locked");
    const perLocked = (key: string) =>
      locked > 0 ? Math.round((sumOf("writer", key) / locked) * 10) / 10 : 0;
    const other = sum("tx-statement") + sum("tx-end") + sum("execute") + sum("batch") - 2 * locked;
    // (A locked group's requests are interactive-transaction requests; the few other
    // transactions', the sweep's say, are counted with them.)
    const groupKinds = ["read-batch", "write-batch", "tx-statement"];
    const statements = groupKinds.reduce((n, kind) => n + sumOf("statements", kind), 0);
    const databaseMs = groupKinds.reduce((n, kind) => n + sumOf("serverMs", kind), 0);
    const commitsPerSecond = result.requestsPerSecond;
    const commits = Math.max(1, commitsPerSecond * options.seconds);
    // In process (no server), the database's work is the serve's own CPU: its time in the requests
    // (wall time, busy waits included) is the best estimate there is.
    const serverMs = server
      ? serverCpu
      : Object.keys(used[0]?.serverMs ?? {}).reduce((n, key) => n + sumOf("serverMs", key), 0);
    const serveMs = server ? cpu : cpu - serverMs;
    // The ledger's chain, written by every serve, checked as an operator would (DESIGN §13).
    const verify = Bun.spawnSync({
      cmd: [BUN, "src/main.ts", "verify"],
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "", OUTBOXD_DATABASE_URL: server.url },
    });
    const ledger = `${verify.stdout.toString()}${verify.stderr.toString()}`.trim().split("\n")[0] ?? "";
    const row: RemoteCommitRow = {
      ledger,
      serves: options.serves,
      connections: perServe * options.serves,
      roundTripMs: options.roundTripMs,
      commitsPerSecond,
      p50Ms: result.latencyP50Ms,
      p99Ms: result.latencyP99Ms,
      errors: result.errors + result.non2xx,
      roundTripsPerGroup: groups > 0 ? Math.round((requests / groups) * 100) / 100 : Number.NaN,
      lockedPercent: groups > 0 ? Math.round((locked / groups) * 100) : 0,
      commitsPerGroup: groups > 0 ? Math.round(((commitsPerSecond * options.seconds) / groups) * 10) / 10 : 0,
      otherRequestsPerSecond: Math.round(other / options.seconds),
      statementsPerCommit:
        Math.round((statements / Math.max(1, commitsPerSecond * options.seconds)) * 10) / 10,
      databaseMsPerGroup: groups > 0 ? Math.round(databaseMs / groups) : 0,
      failedWritesPercent: Math.round(
        (sumOf("failed", "write-batch") / Math.max(1, sum("write-batch"))) * 100,
      ),
      serveCpuUsPerCommit: Math.round((serveMs * 1000) / commits),
      serveCpuUsPerCommitEach: cpuEach.map((ms) => Math.round((ms * 1000) / commits)),
      serveMainThreadUsPerCommit: Math.round(((threads.main ?? 0) * 1000) / commits),
      serveThreadsUsPerCommit: perCommit(
        Object.entries(threads).filter(([name]) => name !== "main"),
        commits,
      ),
      serverCpuUsPerCommit: Math.round((serverMs * 1000) / commits),
      serverThreadsUsPerCommit: perCommit(serverThreads, commits),
      machineIdlePercent: idlePercent(idleBefore, idleAfter),
      warmUpCommitsEach: warmedUp,
      lockTurnsPerSecond: Math.round(turns / (loadMs / 1000)),
      lockMsPerTurn: turns > 0 ? Math.round((heldMs / turns) * 10) / 10 : 0,
      lockBusyPercent: Math.round((heldMs / loadMs) * 100),
      lockWorkMsPerTurn: turns > 0 ? Math.round((workMs / turns) * 10) / 10 : 0,
      lockedGroupMs: {
        gather: perLocked("gatherMs"),
        reads: perLocked("lockedReadsMs"),
        build: perLocked("buildMs"),
        commit: perLocked("commitMs"),
      },
      gatheredFullPercent: locked > 0 ? Math.round((sumOf("writer", "gatheredFull") / locked) * 100) : 0,
    };
    console.error(
      `remote commit ${options.serves} serve(s) c=${row.connections} rtt=${options.roundTripMs}ms ` +
        `(warmed up ${row.warmUpCommitsEach.join(" + ")} commits): ` +
        `${row.commitsPerSecond}/s, ${row.roundTripsPerGroup} round trips per group of ${row.commitsPerGroup}, ` +
        `${row.statementsPerCommit} statements per commit, ${row.databaseMsPerGroup} ms database time per group, ` +
        `${row.failedWritesPercent}% write batches failed, ${row.lockedPercent}% groups locked, ` +
        `CPU per commit ${row.serveCpuUsPerCommit} µs serve (${row.serveCpuUsPerCommitEach.join(" + ")}; main threads ${row.serveMainThreadUsPerCommit}; ` +
        `${Object.entries(row.serveThreadsUsPerCommit)
          .map(([name, us]) => `${name} ${us}`)
          .join(", ")}) + ${row.serverCpuUsPerCommit} µs server (${Object.entries(
          row.serverThreadsUsPerCommit,
        )
          .map(([name, us]) => `${name} ${us}`)
          .join(", ")}), machine idle ${row.machineIdlePercent}%; ` +
        `write lock ${row.lockTurnsPerSecond} turns/s of ${row.lockMsPerTurn} ms (${row.lockWorkMsPerTurn} working), held ${row.lockBusyPercent}%; ` +
        `locked group ms: gather ${row.lockedGroupMs.gather}, reads ${row.lockedGroupMs.reads}, build ${row.lockedGroupMs.build}, commit ${row.lockedGroupMs.commit}, ${row.gatheredFullPercent}% full; verify: ${row.ledger}`,
    );
    return row;
  } finally {
    for (const serve of serves) await serve.stop();
    proxy?.stop();
    await server.stop();
  }
}

/** A server's write lock over a run (turns, ms held, ms working); sqld does not report it. */
interface LockStats {
  turns: number;
  heldMs: number;
  workMs: number;
}

/** Bun's arguments that write a CPU profile into `dir` (none without). */
function cpuProfile(dir: string | undefined): string[] {
  return dir ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${dir}`] : [];
}

/** Threads' CPU (ms) as µs per commit (or delivery), by name, the larger ones (≥ 10 µs). */
function perCommit(threads: (readonly [string, number])[], commits: number): Record<string, number> {
  return Object.fromEntries(
    threads
      .filter(([, ms]) => (ms * 1000) / commits >= 10)
      .map(([name, ms]) => [name, Math.round((ms * 1000) / commits)]),
  );
}

function threadList(threads: Record<string, number>): string {
  return Object.entries(threads)
    .map(([name, us]) => `${name} ${us}`)
    .join(", ");
}

/** Idle and total jiffies of the whole machine so far (/proc/stat; idle counts iowait too). */
function machineIdle(): { idle: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { idle: (fields[3] ?? 0) + (fields[4] ?? 0), total: fields.reduce((a, b) => a + b, 0) };
}

function idlePercent(
  before: { idle: number; total: number },
  after: { idle: number; total: number },
): number {
  return Math.round(((after.idle - before.idle) / Math.max(1, after.total - before.total)) * 100);
}

/** A receiver in this process that answers 200 and checks each aggregate's sequences arrive 1, 2, 3… */
function orderCheckingReceiver() {
  const last = new Map<string, number>();
  const state = { count: 0, violations: 0 };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const aggregate = request.headers.get("outbox-aggregate") ?? "";
      const sequence = Number(request.headers.get("outbox-sequence"));
      const previous = last.get(aggregate) ?? 0;
      if (sequence === previous + 1) {
        last.set(aggregate, sequence);
        state.count++;
      } else if (sequence > previous + 1) {
        state.violations++;
      }
      // (sequence <= previous: a redelivery, answered 200 and not counted)
      return new Response(null, { status: 200 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, state, stop: () => server.stop(true) };
}

export async function remoteDeliveryScenario(options: {
  total: number;
  aggregates: number;
  roundTripMs: number;
  env?: Record<string, string>;
  /** Writes a CPU profile of the `dispatch` process into this folder. */
  profileDir?: string;
}): Promise<RemoteDeliveryRow> {
  const receiver = orderCheckingReceiver();
  const dir = tempDir("outboxd-bench-remote-delivery-");
  const { server, proxy, url } = await startDatabase(options.roundTripMs);
  try {
    await prefill(
      dir,
      { url: receiver.url, secret: newSecret() },
      options.total,
      options.aggregates,
      server.url,
    );
    const statsFile = join(dir, "network.json");
    const profile = cpuProfile(options.profileDir);
    const dispatcher = await startOutboxd(
      { ...networkEnv(statsFile, url), ...options.env },
      "dispatch",
      dir,
      [...profile, ...PRELOAD],
    );
    const started = performance.now();
    const threadsBefore = threadCpuMs(dispatcher.pid);
    const serverThreadsBefore = threadCpuMs(server.pid);
    const idleBefore = machineIdle();
    await waitUntil("the backlog to drain", async () => receiver.state.count >= options.total, 600_000);
    const seconds = (performance.now() - started) / 1000;
    const idleAfter = machineIdle();
    const used = (after: Record<string, number>, before: Record<string, number>) =>
      Object.entries(after).map(([name, ms]) => [name, ms - (before[name] ?? 0)] as const);
    const threads = used(threadCpuMs(dispatcher.pid), threadsBefore);
    const serverThreads = used(threadCpuMs(server.pid), serverThreadsBefore);
    const total = (list: (readonly [string, number])[]) =>
      Math.round((list.reduce((n, [, ms]) => n + ms, 0) * 1000) / options.total);
    const network = readNetwork(statsFile);
    await dispatcher.stop();
    const requests = Object.values(network.counts).reduce((a, b) => a + b, 0);
    const databaseMs = Object.values(network.serverMs).reduce((a, b) => a + b, 0);
    const row: RemoteDeliveryRow = {
      roundTripMs: options.roundTripMs,
      deliveries: options.total,
      aggregates: options.aggregates,
      deliveriesPerSecond: Math.round(options.total / seconds),
      orderViolations: receiver.state.violations,
      roundTripsPerSecond: Math.round(requests / seconds),
      databaseBusy: Math.round((databaseMs / 1000 / seconds) * 100) / 100,
      dispatchCpuUsPerDelivery: total(threads),
      dispatchThreadsUsPerDelivery: perCommit(threads, options.total),
      serverCpuUsPerDelivery: total(serverThreads),
      serverThreadsUsPerDelivery: perCommit(serverThreads, options.total),
      machineIdlePercent: idlePercent(idleBefore, idleAfter),
    };
    console.error(
      `remote delivery rtt=${options.roundTripMs}ms: ${row.deliveriesPerSecond}/s, ${row.orderViolations} order violations, ` +
        `${row.roundTripsPerSecond} round trips/s, CPU per delivery ${row.dispatchCpuUsPerDelivery} µs dispatch (${threadList(row.dispatchThreadsUsPerDelivery)}) ` +
        `+ ${row.serverCpuUsPerDelivery} µs server (${threadList(row.serverThreadsUsPerDelivery)}), machine idle ${row.machineIdlePercent}%`,
    );
    return row;
  } finally {
    receiver.stop();
    proxy?.stop();
    await server.stop();
  }
}

export interface RemoteResults {
  /** One serve, two serves (64 connections), then one serve with ROUND_TRIP_MS added per round trip. */
  commits: RemoteCommitRow[];
  /** The server's bare limit in the same run: directly, and through the delay proxy. */
  limit?: CommitLimit;
  limitDelayed?: CommitLimit;
  deliveries: RemoteDeliveryRow;
}

/** Added per round trip by the delay proxy in the delayed rows. */
const ROUND_TRIP_MS = 2;

export async function remoteScenarios(quick: boolean): Promise<RemoteResults> {
  const seconds = quick ? 2 : 5;
  // (A quick run is a smoke test: a shorter warm-up.)
  const warmUp = quick ? { warmUpCommits: 3_000 } : {};
  const limits = await startDatabase(0);
  const delayed = await startTcpProxy({ host: "127.0.0.1", port: limits.server.port }, ROUND_TRIP_MS / 2);
  let limit: CommitLimit;
  let limitDelayed: CommitLimit;
  try {
    limit = await commitLimit(limits.url, seconds);
    limitDelayed = await commitLimit(delayed.url, seconds);
    console.error(
      `remote limit: ${limit.rowByRow}/s row by row, ${limit.setBased}/s set-based; +${ROUND_TRIP_MS} ms: ${limitDelayed.rowByRow}/s, ${limitDelayed.setBased}/s`,
    );
  } finally {
    delayed.stop();
    await limits.server.stop();
  }
  return {
    commits: [
      await remoteCommitScenario({ seconds, roundTripMs: 0, serves: 1, connections: 64, ...warmUp }),
      await remoteCommitScenario({ seconds, roundTripMs: 0, serves: 2, connections: 64, ...warmUp }),
      await remoteCommitScenario({
        seconds,
        roundTripMs: ROUND_TRIP_MS,
        serves: 1,
        connections: 64,
        ...warmUp,
      }),
    ],
    limit,
    limitDelayed,
    deliveries: await remoteDeliveryScenario({
      total: quick ? 5_000 : 20_000,
      aggregates: 1000,
      roundTripMs: 0,
      // Raised as in the other one-endpoint delivery scenarios: a politeness limit, not a throughput setting.
      env: { OUTBOXD_ENDPOINT_CONCURRENCY: "64" },
    }),
  };
}

/** Its section of the bench report, with its targets. */
export function remoteReport(r: RemoteResults): string[] {
  const lines = [
    "## 7. Remote database: a real libSQL server (sqld)",
    "",
    `A real libSQL server (sqld 0.24.32, its defaults: WAL, synchronous NORMAL) on 127.0.0.1, one for every run, on this machine's cores too (its CPU is reported apart; on a real deployment it is another machine's). Delayed rows go through a loopback TCP proxy that holds each chunk ${ROUND_TRIP_MS / 2} ms each way (${ROUND_TRIP_MS} ms per round trip); test/helpers/network.ts counts the requests. The limit: @libsql/client batch(…, "write") requests one after the other, each of 64 one-record-one-event commits, as 2 INSERTs per commit (row by row) or as 2 INSERT … SELECT … FROM json_each(?) for the batch (set-based), in the same run. Unmeasured load first, until each serve process has answered 15,000 commits (3,000 in a quick run; at most 45 s). One load process for all serves.`,
    "",
    "| serve processes | connections | added per round trip ms | commits/s | of the row-by-row limit | of the set-based limit | p50 ms | p99 ms | requests per group commit | commits per group | statements per commit | groups locked % | write batches failed % | serve CPU µs/commit (each) | server CPU µs/commit | machine idle % | errors | outboxd verify |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...r.commits.map((row) => {
      const limit = row.roundTripMs > 0 ? r.limitDelayed : r.limit;
      const of = (bare: number | undefined) => (bare ? (row.commitsPerSecond / bare).toFixed(2) : "—");
      return `| ${row.serves} | ${row.connections} | ${row.roundTripMs} | ${row.commitsPerSecond} | ${of(limit?.rowByRow)} | ${of(limit?.setBased)} | ${row.p50Ms} | ${row.p99Ms} | ${row.roundTripsPerGroup} | ${row.commitsPerGroup} | ${row.statementsPerCommit} | ${row.lockedPercent} | ${row.failedWritesPercent} | ${row.serveCpuUsPerCommit} (${row.serveCpuUsPerCommitEach.join(" + ")}) | ${row.serverCpuUsPerCommit} | ${row.machineIdlePercent} | ${row.errors} | ${row.ledger} |`;
    }),
    "",
  ];
  if (r.limit && r.limitDelayed) {
    lines.push(
      `Limit of the same run: ${r.limit.rowByRow} commits/s row by row, ${r.limit.setBased}/s set-based; with ${ROUND_TRIP_MS} ms added per round trip ${r.limitDelayed.rowByRow}/s and ${r.limitDelayed.setBased}/s.`,
      "",
    );
  }
  const d = r.deliveries;
  const [one, two, delayed] = r.commits;
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? (a / b).toFixed(2) : "—");
  lines.push(
    `Deliveries: ${d.deliveriesPerSecond}/s (a backlog of ${d.deliveries} over ${d.aggregates} aggregates to one endpoint, one dispatch process), ${d.orderViolations} order violations, ${d.roundTripsPerSecond} requests/s.`,
    "",
    `- targets: one serve ${ratio(one?.commitsPerSecond, r.limit?.rowByRow)} of the row-by-row limit (≥ 0.5; aim ≥ 1.0 set-based: ${ratio(one?.commitsPerSecond, r.limit?.setBased)}); ` +
      `+${ROUND_TRIP_MS} ms: ${delayed?.commitsPerSecond}/s (≥ 2,000) with ${delayed?.roundTripsPerGroup} requests per group (≤ 4); ` +
      `two serves ${ratio(two?.commitsPerSecond, one?.commitsPerSecond)} of one (≥ 0.9); ` +
      `deliveries ${d.deliveriesPerSecond}/s with ${d.orderViolations} order violations (≥ 2,000, order kept)`,
  );
  return lines;
}

// `npx bun bench/scenarios/remote.ts [--quick]`: this scenario alone, printed as JSON and as
// its report section (`npm run bench -- --only=remote` writes it to bench/results too).
if (import.meta.main) {
  const results = await remoteScenarios(process.argv.includes("--quick"));
  console.log(JSON.stringify(results, null, 2));
  console.log(remoteReport(results).join("\n"));
}
