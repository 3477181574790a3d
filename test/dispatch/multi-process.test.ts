// Several dispatchers on one database (DESIGN §6): three real `outboxd dispatch` child processes
// share a SQLite file while an in-process server (no dispatcher of its own) commits thousands of
// events into it. Nothing is lost, per-aggregate order holds across processes, and nothing is
// delivered twice unless a lease ran out (here: a dispatcher SIGKILLed mid-flight).
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type Child, startChild } from "../helpers/process.ts";
import { type Received, startReceiver, type TestReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { commitEvents, expectStatus, ok, sql, waitUntil } from "./harness.ts";

/** Records arrivals per event id and checks order per aggregate as requests come in. */
class Ledger {
  readonly arrivals = new Map<string, number>();
  readonly firstArrivals = new Map<string, number[]>();
  readonly early: string[] = [];
  readonly #acknowledged = new Map<string, number>();

  answer(request: Received): Response {
    const id = request.headers.get("webhook-id") as string;
    const aggregate = request.headers.get("outbox-aggregate") as string;
    const sequence = Number(request.headers.get("outbox-sequence"));
    const acked = this.#acknowledged.get(aggregate) ?? 0;
    if (sequence > acked + 1)
      this.early.push(`${aggregate}: ${sequence} sent before ${acked + 1} was acknowledged`);
    const seen = this.arrivals.get(id) ?? 0;
    this.arrivals.set(id, seen + 1);
    if (seen === 0) {
      const list = this.firstArrivals.get(aggregate) ?? [];
      list.push(sequence);
      this.firstArrivals.set(aggregate, list);
    }
    this.#acknowledged.set(aggregate, Math.max(acked, sequence));
    return ok();
  }

  duplicates(): string[] {
    return [...this.arrivals].filter(([, n]) => n > 1).map(([id]) => id);
  }
}

interface World {
  dir: string;
  server: TestServer;
  receiver: TestReceiver;
  ledger: Ledger;
  children: Child[];
}

const worlds: World[] = [];
afterAll(async () => {
  // On failure too: no child may outlive the suite.
  for (const world of worlds.splice(0)) {
    for (const child of world.children) {
      child.kill("SIGKILL");
      await child.exited;
    }
    await world.server.stop();
    await world.receiver.stop();
    rmSync(world.dir, { recursive: true, force: true });
  }
});

async function startWorld(dispatchers: number, env: Record<string, string>): Promise<World> {
  const dir = tempDir("outboxd-multi-");
  const ledger = new Ledger();
  const receiver = startReceiver((request) => ledger.answer(request));
  // The committing server migrates the file first; it runs no dispatcher of its own.
  const server = await startServer(
    { OUTBOXD_DATABASE_URL: `file:${join(dir, "x.db")}` },
    { dispatch: false },
  );
  const world: World = { dir, server, receiver, ledger, children: [] };
  worlds.push(world);
  expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
  for (let i = 0; i < dispatchers; i++) spawnDispatcher(world, env);
  return world;
}

function spawnDispatcher(world: World, env: Record<string, string>): Child {
  const child = startChild([process.execPath, "src/main.ts", "dispatch"], {
    OUTBOXD_DATABASE_URL: `file:${join(world.dir, "x.db")}`,
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OUTBOXD_ADMIN_TOKEN: `multi-admin-${crypto.randomUUID()}`,
    OUTBOXD_LOG_LEVEL: "warn",
    // The key test/helpers/server.ts seals endpoint secrets with.
    OUTBOXD_MASTER_KEY: Buffer.alloc(32, 7).toString("base64"),
    OUTBOXD_ENDPOINT_CONCURRENCY: "16",
    ...env,
  });
  world.children.push(child);
  return child;
}

/** Commits `perAggregate` rounds of one event for each of `aggregates` aggregates. */
async function commitRounds(world: World, aggregates: number, perAggregate: number): Promise<void> {
  for (let round = 0; round < perAggregate; round++) {
    await commitEvents(
      world.server,
      Array.from({ length: aggregates }, (_, a) => ({ aggregate: `multi/${a}`, payload: { round } })),
    );
  }
}

/** The dispatcher ids (`dsp_…`, one per process) holding leases right now. */
async function leaseHolders(world: World): Promise<string[]> {
  const rows = await sql<{ owner: string }>(
    world.server,
    "SELECT DISTINCT substr(lease_owner, 1, instr(lease_owner, ':') - 1) AS owner FROM deliveries WHERE lease_owner IS NOT NULL",
  );
  return rows.map((r) => r.owner);
}

async function expectAllDelivered(world: World, total: number): Promise<void> {
  await waitUntil(
    `all ${total} deliveries marked delivered`,
    async () => {
      const [row] = await sql<{ n: number }>(
        world.server,
        "SELECT count(*) AS n FROM deliveries WHERE status = 'delivered'",
      );
      return row?.n === total;
    },
    30_000,
  );
  const [counts] = await sql<{ events: number; deliveries: number }>(
    world.server,
    "SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM deliveries) AS deliveries",
  );
  expect(counts).toEqual({ events: total, deliveries: total });
}

function expectOrdered(world: World, aggregates: number, perAggregate: number): void {
  expect(world.ledger.early).toEqual([]);
  const inOrder = Array.from({ length: perAggregate }, (_, i) => i + 1);
  for (let a = 0; a < aggregates; a++) expect(world.ledger.firstArrivals.get(`multi/${a}`)).toEqual(inOrder);
}

describe("three dispatcher processes on one database file", () => {
  test("3000 events over 100 aggregates: none lost, per-aggregate order kept, none delivered twice", async () => {
    const AGGREGATES = 100;
    const PER_AGGREGATE = 30;
    const total = AGGREGATES * PER_AGGREGATE;
    // A dispatcher keeps the queues it holds (a queue's next head is claimed with its predecessor's
    // outcome), so each may hold far fewer than the 100 queues (4 + 8 × 4 ahead), and the work must
    // be shared: otherwise one fast process may keep them all and the others only stand by.
    const world = await startWorld(3, { OUTBOXD_ENDPOINT_CONCURRENCY: "4" });

    const holders = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const owner of await leaseHolders(world)) holders.add(owner);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      await commitRounds(world, AGGREGATES, PER_AGGREGATE);
      await waitUntil(
        `${total} distinct events at the receiver`,
        () => world.ledger.arrivals.size === total,
        45_000,
      );
    } finally {
      sampling = false;
      await sampler;
    }
    await expectAllDelivered(world, total);
    expectOrdered(world, AGGREGATES, PER_AGGREGATE);
    // Leases are 60 s: nothing was claimed twice, so nothing may arrive twice.
    expect(world.ledger.duplicates()).toEqual([]);
    // Several processes took part (the work was shared, not done by one). Not "all three": the
    // sampler sees leases every 5 ms, and on a quiet machine two can drain 3,000 deliveries
    // before a lease of the third is caught (seen in a clean-clone CI run).
    expect(holders.size).toBeGreaterThanOrEqual(2);

    // They shut down cleanly on SIGTERM.
    for (const child of world.children) child.kill("SIGTERM");
    for (const child of world.children) expect(await child.exited).toBe(0);
  }, 60_000);

  test("a dispatcher SIGKILLed mid-flight: its leases run out, the others finish, duplicates only of re-claimed rows", async () => {
    const AGGREGATES = 40;
    const PER_AGGREGATE = 10;
    const total = AGGREGATES * PER_AGGREGATE;
    const env = { OUTBOXD_LEASE: "2s", OUTBOXD_SEND_TIMEOUT: "1s" };
    // One dispatcher first, whose requests the receiver holds: it is the one with leases.
    const world = await startWorld(1, env);
    const [victim] = world.children;
    let holding = true;
    const held: (() => void)[] = [];
    const answer = world.receiver.respond;
    world.receiver.respond = async (request, index) => {
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      return answer(request, index);
    };

    await commitRounds(world, AGGREGATES, PER_AGGREGATE);
    await waitUntil("the first dispatcher's requests in flight", () => held.length >= 3);
    victim?.kill("SIGKILL");
    await victim?.exited;
    const orphaned = held.length;
    holding = false;
    for (const release of held.splice(0)) release();
    spawnDispatcher(world, env);
    spawnDispatcher(world, env);

    await waitUntil(
      `${total} distinct events at the receiver`,
      () => world.ledger.arrivals.size === total,
      45_000,
    );
    await expectAllDelivered(world, total);
    expectOrdered(world, AGGREGATES, PER_AGGREGATE);

    // The orphaned requests reached the receiver but their answers never reached a
    // dispatcher: after the lease ran out they were sent again. Those are the only
    // duplicates, each a delivery claimed again (the receiver never failed, so only an
    // expired lease explains attempt_count > 1), and each arrived at most twice.
    const duplicates = world.ledger.duplicates();
    // (A request still being read when the victim died may add one more to those counted.)
    expect(duplicates.length).toBeGreaterThanOrEqual(orphaned);
    const reclaimed = new Set(
      (
        await sql<{ eventId: string }>(
          world.server,
          "SELECT event_id AS eventId FROM deliveries WHERE attempt_count > 1",
        )
      ).map((r) => r.eventId),
    );
    // (Rows the victim had claimed but not yet sent were re-claimed too, without a duplicate.)
    for (const id of duplicates) expect(reclaimed.has(id)).toBe(true);
    for (const [, n] of world.ledger.arrivals) expect(n).toBeLessThanOrEqual(2);

    for (const child of world.children.slice(1)) child.kill("SIGTERM");
    for (const child of world.children.slice(1)) expect(await child.exited).toBe(0);
  }, 60_000);
});
