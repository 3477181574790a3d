// Crash soak (`npm run soak -- --duration 60 --rate 200`): clients commit to many aggregates
// while the server and standalone dispatchers are SIGKILLed at random and restarted, and the
// receiver fails and stalls at random. Then everything is drained and the ledger is checked:
//  - every commit a client saw acknowledged is stored, and each of its events delivered;
//  - every event the receiver applied belongs to a stored commit;
//  - per aggregate the receiver applied strictly increasing sequences, none missing;
//  - redeliveries were rejected as duplicates, never applied twice.
//  - per aggregate the stored sequences are 1..n, none repeated or skipped, and the record's
//    version is the number of commits that wrote it (no lost update).
// `--servers 2` runs several `serve` processes on the one database file; `--sqld` runs every
// process on a real libSQL server instead (sqld on 127.0.0.1, test/helpers/sqld.ts, never killed),
// which they share through @libsql/client's remote write path as several machines would
// (`--network-delay 2` adds a simulated round trip, test/helpers/network.ts).
// Last, `outboxd verify` checks the ledger's chain on the database.
// Exit code 0 when the ledger holds, 1 otherwise. Everything runs on 127.0.0.1, bounded in time.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { apiClient, type Request } from "../test/helpers/api.ts";
import { type Child, startChild } from "../test/helpers/process.ts";
import { tempDir } from "../test/helpers/server.ts";
import { startSnippetReceiver } from "../test/helpers/snippet-receiver.ts";
import { type Sqld, startSqld } from "../test/helpers/sqld.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    rate: { type: "string", default: "200" },
    clients: { type: "string", default: "8" },
    aggregates: { type: "string", default: "50" },
    dispatchers: { type: "string", default: "2" },
    servers: { type: "string", default: "1" },
    "network-delay": { type: "string" },
    sqld: { type: "boolean", default: false },
    seed: { type: "string", default: String(Date.now()) },
  },
});
const durationMs = Number(values.duration) * 1000;
const rate = Number(values.rate);
const clientCount = Number(values.clients);
const aggregateCount = Number(values.aggregates);
const dispatcherCount = Number(values.dispatchers);
const serverCount = Number(values.servers);

// A small seeded generator, so a failing run can be repeated with --seed.
let state = Number(values.seed) >>> 0 || 1;
function random(): number {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 2 ** 32;
}

const TOKEN = `soak-${crypto.randomUUID()}`;
const dir = tempDir("outboxd-soak-");
// Each server's port: the kernel's pick at its first start (PORT=0, read from its listening line),
// kept for its restarts so that a client's server keeps its address. (A port probed free and bound
// later may be taken in between: a start-up failure that is no finding of the soak.)
const ports: number[] = Array.from({ length: serverCount }, () => 0);
const env: Record<string, string> = {
  OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
  OUTBOXD_ADMIN_TOKEN: TOKEN,
  OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
  OUTBOXD_LOG_LEVEL: "info",
  OUTBOXD_RETRY_BASE: "100ms",
  OUTBOXD_RETRY_CAP: "1s",
  OUTBOXD_LEASE: "3s",
  OUTBOXD_SEND_TIMEOUT: "1s",
};
// A real libSQL server, as several machines on sqld or Turso use it (outboxd picks its remote path
// from the URL); the server itself is never killed.
let sqld: Sqld | null = null;
if (values.sqld) {
  sqld = await startSqld();
  env.OUTBOXD_DATABASE_URL = sqld.url;
}
const apis: Request[] = [];
/** The first server's API (set once it listens). */
let api: Request;
// Through the simulated network (a test preload), or directly.
const outboxd =
  values["network-delay"] === undefined
    ? ["src/main.ts"]
    : ["--preload", "./test/helpers/network-preload.ts", "src/main.ts"];
if (values["network-delay"] !== undefined) env.OUTBOXD_SIMULATED_RTT_MS = values["network-delay"];

// The receiver fails 7% of requests and stalls 1% past the send timeout (outboxd gives up and
// retries while the stalled request still applies: a redelivery the snippet must reject).
const receiver = startSnippetReceiver();
receiver.fail = () => {
  const roll = random();
  if (roll < 0.05) return 500;
  if (roll < 0.07) return 503;
  return undefined;
};
receiver.stall = () => (random() < 0.01 ? 1500 : 0);

interface Ack {
  eventId: string;
  aggregate: string;
  ackAt: number;
}
const acks: Ack[] = [];
const summary = { commits: 0, retries: 0, serverKills: 0, dispatcherKills: 0 };

const servers: Child[] = ports.map((_, i) => startServer(i));
const dispatchers: Child[] = Array.from({ length: dispatcherCount }, () => startDispatcher());

function startServer(i: number): Child {
  return startChild([process.execPath, ...outboxd, "serve"], { ...env, PORT: String(ports[i]) });
}
function startDispatcher(): Child {
  return startChild([process.execPath, ...outboxd, "dispatch"], { ...env, PORT: "0" });
}

async function main(): Promise<number> {
  for (const [i, server] of servers.entries()) {
    const url = await server.listening();
    ports[i] = Number(new URL(url).port);
    apis[i] = apiClient(url, TOKEN);
  }
  api = apis[0] as Request;
  const endpoint = await api("POST", "/v1/endpoints", { url: receiver.url, secret: receiver.secret });
  if (endpoint.status !== 201) throw new Error(`endpoint: ${JSON.stringify(endpoint.body)}`);
  console.log(
    `soak: ${values.duration}s, ${rate} commits/s, ${clientCount} clients, ${aggregateCount} aggregates, ` +
      `${serverCount} server(s), ${dispatcherCount} dispatcher(s), ${sqld ? `libSQL server ${sqld.url}` : "local file"}, seed ${values.seed}`,
  );

  const end = Date.now() + durationMs;
  const chaos = runChaos(end);
  await Promise.all(Array.from({ length: clientCount }, (_, i) => runClient(i, end)));
  await chaos;

  // Drain: no more kills; the servers deliver whatever is left.
  for (const d of dispatchers) d.kill("SIGKILL");
  await ensureServers();
  const drained = await drain(120_000);
  return await checkLedger(drained);
}

async function runClient(index: number, end: number): Promise<void> {
  const interval = (1000 * clientCount) / rate;
  let n = 0;
  while (Date.now() < end) {
    const started = Date.now();
    const aggregate = Math.floor(random() * aggregateCount);
    const key = `c${index}-${n++}`;
    const body = {
      records: [{ collection: "soak", id: `a${aggregate}`, data: { client: index, n } }],
      events: [{ type: "soak.changed", payload: { client: index, n } }],
    };
    // Retry with the same Idempotency-Key until acknowledged: a lost response is then either
    // replayed or committed now, never twice.
    for (;;) {
      try {
        // Each client sticks to one server, as a load balancer with affinity would.
        const response = await (apis[index % apis.length] as Request)("POST", "/v1/commits", body, {
          "idempotency-key": key,
        });
        if (response.status === 201) {
          summary.commits++;
          acks.push({
            eventId: response.body.events[0].id,
            aggregate: `soak/a${aggregate}`,
            ackAt: Date.now(),
          });
          break;
        }
        if (response.status !== 409 && response.status < 500) {
          throw new Error(`commit refused: ${response.status} ${JSON.stringify(response.body)}`);
        }
      } catch (error) {
        if (error instanceof Error && error.message.startsWith("commit refused")) throw error;
      }
      summary.retries++;
      await Bun.sleep(50);
      if (Date.now() > end + 60_000) throw new Error("a commit could not be acknowledged within a minute");
    }
    const wait = interval - (Date.now() - started);
    if (wait > 0) await Bun.sleep(wait);
  }
}

async function runChaos(end: number): Promise<void> {
  while (Date.now() < end) {
    await Bun.sleep(1000 + random() * 3000);
    if (Date.now() >= end) break;
    if (random() < 0.5) {
      const i = Math.floor(random() * servers.length);
      const victim = servers[i] as Child;
      victim.kill("SIGKILL");
      await victim.exited;
      summary.serverKills++;
      servers[i] = startServer(i);
      await servers[i]?.listening().catch(() => {});
    } else {
      const i = Math.floor(random() * dispatchers.length);
      const victim = dispatchers[i];
      if (!victim) continue;
      victim.kill("SIGKILL");
      await victim.exited;
      summary.dispatcherKills++;
      dispatchers[i] = startDispatcher();
    }
  }
}

async function ensureServers(): Promise<void> {
  for (const [i, server] of servers.entries()) {
    if (server.proc.exitCode !== null || server.proc.signalCode !== null) servers[i] = startServer(i);
    await servers[i]?.listening();
  }
}

async function drain(timeoutMs: number): Promise<boolean> {
  receiver.fail = () => undefined;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const stats = await api("GET", "/v1/stats").catch(() => null);
    if (stats?.status === 200 && stats.body.pending === 0) return true;
    await Bun.sleep(200);
  }
  return false;
}

async function checkLedger(drained: boolean): Promise<number> {
  const problems: string[] = [];
  if (!drained) problems.push("the backlog did not drain within 2 minutes");

  // All stored events, per aggregate, in sequence order.
  const stored = new Map<string, { id: string; sequence: number; status: string }[]>();
  for (let a = 0; a < aggregateCount; a++) {
    const aggregate = `soak/a${a}`;
    const list: { id: string; sequence: number; status: string }[] = [];
    let after: string | null = null;
    do {
      const page: Awaited<ReturnType<Request>> = await api(
        "GET",
        `/v1/events?aggregate=${encodeURIComponent(aggregate)}&limit=500${after ? `&after=${after}` : ""}`,
      );
      for (const e of page.body.data)
        list.push({ id: e.id, sequence: e.sequence, status: e.deliveries[0]?.status });
      after = page.body.next;
    } while (after);
    stored.set(aggregate, list);
  }
  const storedIds = new Map([...stored.values()].flat().map((e) => [e.id, e]));

  // Sequences 1..n per aggregate, and a version per commit: nothing repeated, skipped or lost.
  for (const [aggregate, events] of stored) {
    const sequences = events.map((e) => e.sequence).sort((a, b) => a - b);
    if (sequences.some((sequence, i) => sequence !== i + 1)) {
      problems.push(`${aggregate}: stored sequences ${summarise(sequences)} are not 1..${sequences.length}`);
    }
    const record = await api("GET", `/v1/records/${aggregate}`);
    const version = record.status === 200 ? record.body.version : 0;
    const committed = acks.filter((ack) => ack.aggregate === aggregate).length;
    if (version !== committed) problems.push(`${aggregate}: version ${version} after ${committed} commits`);
  }

  for (const ack of acks) {
    const event = storedIds.get(ack.eventId);
    if (!event) problems.push(`acknowledged event ${ack.eventId} is not stored`);
    else if (event.status !== "delivered")
      problems.push(`acknowledged event ${ack.eventId} is ${event.status}`);
  }
  const appliedIds = new Set<string>();
  for (const applied of receiver.applied) {
    if (!storedIds.has(applied.id)) problems.push(`applied event ${applied.id} belongs to no stored commit`);
    if (appliedIds.has(applied.id)) problems.push(`event ${applied.id} was applied twice`);
    appliedIds.add(applied.id);
  }
  for (const [aggregate, events] of stored) {
    const applied = receiver.applied.filter((a) => a.aggregate === aggregate).map((a) => a.sequence);
    const expected = events.filter((e) => e.status !== "dead").map((e) => e.sequence);
    if (JSON.stringify(applied) !== JSON.stringify(expected)) {
      problems.push(`${aggregate}: applied ${summarise(applied)} but stored ${summarise(expected)}`);
    }
    const dead = events.filter((e) => e.status === "dead");
    if (dead.length > 0)
      console.log(`${aggregate}: ${dead.length} dead-lettered (visible in /v1/deliveries?status=dead)`);
  }

  const lags = acks
    .map((ack) => (receiver.appliedAt.get(ack.eventId) ?? Number.NaN) - ack.ackAt)
    .filter(Number.isFinite);
  const maxLag = lags.length ? Math.max(...lags) : 0;
  // The ledger's chain (DESIGN §13) holds on the database the processes were killed on.
  const verify = Bun.spawnSync({
    cmd: [process.execPath, "src/main.ts", "verify"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...env,
      OUTBOXD_LOG_LEVEL: "error",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const verified = `${verify.stdout.toString()}${verify.stderr.toString()}`.trim();
  if (verify.exitCode !== 0) problems.push(`outboxd verify exited ${verify.exitCode}: ${verified}`);
  else console.log(`outboxd verify: ${verified.split("\n")[0]}`);

  const report = {
    ...summary,
    storedEvents: storedIds.size,
    applied: receiver.applied.length,
    duplicatesRejected: receiver.duplicates.length,
    staleRejected: receiver.stale.length,
    receiverRequests: receiver.requests,
    maxLagMs: Math.round(maxLag),
    problems: problems.length,
  };
  console.log(JSON.stringify(report, null, 2));
  for (const problem of problems.slice(0, 20)) console.error(`LEDGER: ${problem}`);
  console.log(problems.length === 0 ? "soak: 1 passed, 0 failed" : "soak: 0 passed, 1 failed");
  return problems.length === 0 ? 0 : 1;
}

function summarise(sequences: number[]): string {
  return sequences.length <= 8
    ? `[${sequences.join(",")}]`
    : `${sequences.length} events [${sequences.slice(0, 4).join(",")}…${sequences.slice(-2).join(",")}]`;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(error);
} finally {
  for (const child of [...servers, ...dispatchers]) child.kill("SIGKILL");
  await Promise.all([...servers, ...dispatchers].map((child) => child.exited));
  await receiver.stop();
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
