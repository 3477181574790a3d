// The failure drills of the seed articles: a real outboxd child process, really killed at a
// named failpoint (SIGKILL, no cleanup), restarted on the same database file, delivering to a
// real receiver that verifies and applies with the receiver snippet. Each drill checks the
// completion triple: the record is in its new state, the delivery is `delivered`, and the id
// the receiver applied is the event's id.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { apiClient, type Request } from "../helpers/api.ts";
import { type Child, startChild } from "../helpers/process.ts";
import { waitFor } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/server.ts";
import { type SnippetReceiver, startSnippetReceiver } from "../helpers/snippet-receiver.ts";
import { onSqld, startSqld } from "../helpers/sqld.ts";
import { Database } from "../helpers/sqlite.ts";

const TOKEN = `drill-admin-${crypto.randomUUID()}`;

interface Outboxd {
  child: Child;
  api: Request;
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Where a drill's processes keep their database: a file in a temp dir, or a libSQL server of its own. */
interface World {
  databaseUrl: string;
  receiver: SnippetReceiver;
}

async function newWorld(): Promise<World> {
  const dir = tempDir("outboxd-drill-");
  const receiver = startSnippetReceiver();
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  // OUTBOXD_TEST_SQLD=1 (.ci/run): the drills again on a real libSQL server.
  const sqld = onSqld() ? await startSqld() : null;
  if (sqld) cleanup.push(() => sqld.stop());
  const databaseUrl = sqld?.url ?? `file:${join(dir, "outboxd.db")}`;
  // Run after every process of the drill was killed (cleanup runs in reverse).
  cleanup.push(() => expectIntact(databaseUrl));
  cleanup.push(() => receiver.stop());
  return { databaseUrl, receiver };
}

/** The database the drill's processes were killed on passes SQLite's integrity check. */
async function expectIntact(databaseUrl: string): Promise<void> {
  const file = localFile(databaseUrl);
  if (file && !existsSync(file)) return;
  expect(await outside(databaseUrl, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
}

function localFile(databaseUrl: string): string | null {
  return databaseUrl.startsWith("file:") ? databaseUrl.slice("file:".length) : null;
}

/** One statement on a connection of the test's own, outside outboxd: its rows, or the rows it changed. */
async function outside(databaseUrl: string, sql: string): Promise<unknown[] | number> {
  const file = localFile(databaseUrl);
  if (file) {
    const db = new Database(file);
    try {
      const statement = db.prepare(sql);
      return /^\s*(SELECT|PRAGMA)/i.test(sql) ? statement.all() : statement.run().changes;
    } finally {
      db.close();
    }
  }
  const client = createClient({ url: databaseUrl });
  try {
    const result = await client.execute(sql);
    return result.columns.length > 0 ? result.rows.map((row) => ({ ...row })) : result.rowsAffected;
  } finally {
    client.close();
  }
}

async function start(world: World, env: Record<string, string> = {}): Promise<Outboxd> {
  const child = startChild([process.execPath, "src/main.ts", "serve"], {
    PORT: "0",
    OUTBOXD_DATABASE_URL: world.databaseUrl,
    OUTBOXD_ADMIN_TOKEN: TOKEN,
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OUTBOXD_LOG_LEVEL: "info",
    OUTBOXD_RETRY_BASE: "50ms",
    OUTBOXD_RETRY_CAP: "200ms",
    OUTBOXD_LEASE: "30s",
    OUTBOXD_SEND_TIMEOUT: "5s",
    ...env,
  });
  cleanup.push(async () => {
    child.kill("SIGKILL");
    await child.exited;
  });
  return { child, api: apiClient(await child.listening(), TOKEN) };
}

function withFailpoint(name: string): Record<string, string> {
  return { OUTBOXD_FAILPOINTS: name, OUTBOXD_ALLOW_FAILPOINTS: "1" };
}

/** A process that dies at a failpoint dies by SIGKILL, not by an orderly exit. */
async function expectKilled(child: Child): Promise<void> {
  await child.exited;
  expect(child.proc.signalCode).toBe("SIGKILL");
  expect(child.stderr()).toContain("failpoint");
}

async function addEndpoint(api: Request, receiver: SnippetReceiver): Promise<string> {
  const response = await api("POST", "/v1/endpoints", { url: receiver.url, secret: receiver.secret });
  expect(response.status).toBe(201);
  return response.body.id;
}

const approve = (expectedVersion: number, status = "approved") => ({
  records: [{ collection: "returns", id: "r-1", expectedVersion, data: { status } }],
  events: [{ type: `return.${status}`, payload: { returnId: "r-1", status } }],
});

async function eventsOf(api: Request, aggregate: string) {
  const response = await api("GET", `/v1/events?aggregate=${encodeURIComponent(aggregate)}&limit=500`);
  expect(response.status).toBe(200);
  return response.body.data as {
    id: string;
    sequence: number;
    deliveries: { status: string; deadReason: string | null }[];
  }[];
}

/** Every lease in the database expires now: the restart need not wait out the lease (backdating). */
async function expireLeases(world: World): Promise<number> {
  return (await outside(
    world.databaseUrl,
    "UPDATE deliveries SET lease_expires_at = 0 WHERE lease_expires_at IS NOT NULL",
  )) as number;
}

describe("failure drills", () => {
  test("1. crash right after the business write: neither the record change nor any event or delivery exists", async () => {
    const world = await newWorld();
    const { receiver } = world;
    const first = await start(world, withFailpoint("commit.after_records"));
    await addEndpoint(first.api, receiver);
    await expect(first.api("POST", "/v1/commits", approve(0))).rejects.toThrow();
    await expectKilled(first.child);

    const second = await start(world);
    const record = await second.api("GET", "/v1/records/returns/r-1");
    expect(record.status).toBe(404);
    expect(record.body.currentVersion).toBeNull();
    expect(await eventsOf(second.api, "returns/r-1")).toEqual([]);
    expect((await second.api("GET", "/v1/deliveries")).body.data).toEqual([]);
    expect((await second.api("GET", "/v1/stats")).body.pending).toBe(0);

    // The same commit succeeds now and gets sequence 1: the crashed one consumed nothing.
    const retry = await second.api("POST", "/v1/commits", approve(0));
    expect(retry.status).toBe(201);
    expect(retry.body.events[0].sequence).toBe(1);
    await waitFor("the retried commit's delivery", () => receiver.applied.length === 1);
    expect(receiver.applied[0]?.id).toBe(retry.body.events[0].id);
  });

  test("2. crash after COMMIT, before the response: after restart the pending delivery is sent", async () => {
    const world = await newWorld();
    const { receiver } = world;
    const first = await start(world, withFailpoint("commit.after_commit"));
    await addEndpoint(first.api, receiver);
    await expect(first.api("POST", "/v1/commits", approve(0))).rejects.toThrow();
    await expectKilled(first.child);
    expect(receiver.requests).toBe(0);
    // The dead process's dispatcher may have leased the committed delivery between the COMMIT
    // and the crash (on a libSQL server it claims it by itself once the write batch returns);
    // such a lease runs out after OUTBOXD_LEASE, as drill 3's does, and is run out here.
    expect(await expireLeases(world)).toBeLessThanOrEqual(1);

    const second = await start(world);
    await waitFor("the committed event to arrive", () => receiver.applied.length === 1);
    const [event] = await eventsOf(second.api, "returns/r-1");
    // The completion triple.
    const record = await second.api("GET", "/v1/records/returns/r-1");
    expect(record.body).toMatchObject({ version: 1, data: { status: "approved" } });
    await waitFor(
      "delivered",
      async () => (await eventsOf(second.api, "returns/r-1"))[0]?.deliveries[0]?.status === "delivered",
    );
    expect(receiver.applied[0]?.id).toBe(event?.id as string);
  });

  test("3. crash after the receiver accepted, before delivered was recorded: sent again, applied once", async () => {
    const world = await newWorld();
    const { receiver } = world;
    const first = await start(world, withFailpoint("dispatch.after_send"));
    await addEndpoint(first.api, receiver);
    const commit = await first.api("POST", "/v1/commits", approve(0));
    expect(commit.status).toBe(201);
    await expectKilled(first.child);
    expect(receiver.applied).toHaveLength(1);
    expect(await expireLeases(world)).toBe(1);

    const second = await start(world);
    await waitFor("the redelivery", () => receiver.duplicates.length === 1);
    await waitFor(
      "delivered",
      async () => (await eventsOf(second.api, "returns/r-1"))[0]?.deliveries[0]?.status === "delivered",
    );
    const eventId = commit.body.events[0].id;
    expect(receiver.applied.map((a) => a.id)).toEqual([eventId]);
    expect(receiver.duplicates.map((a) => a.id)).toEqual([eventId]);
    expect((await second.api("GET", "/v1/records/returns/r-1")).body).toMatchObject({ version: 1 });
  });

  test("4. rapid updates of one aggregate, receiver failing intermittently: never an older sequence after a newer one", async () => {
    const world = await newWorld();
    const { receiver } = world;
    receiver.fail = (_event, index) => (index % 3 === 1 ? 503 : undefined);
    const { api } = await start(world);
    await addEndpoint(api, receiver);
    const updates = 30;
    for (let version = 0; version < updates; version++) {
      const response = await api(
        "POST",
        "/v1/commits",
        approve(version, version % 2 ? "approved" : "pending"),
      );
      expect(response.status).toBe(201);
    }
    await waitFor("every update applied", () => receiver.applied.length === updates, 30_000);
    expect(receiver.applied.map((a) => a.sequence)).toEqual(Array.from({ length: updates }, (_, i) => i + 1));
    expect(receiver.stale).toEqual([]);
    const events = await eventsOf(api, "returns/r-1");
    await waitFor("all delivered", async () =>
      (await eventsOf(api, "returns/r-1")).every((e) => e.deliveries[0]?.status === "delivered"),
    );
    expect(receiver.applied.map((a) => a.id)).toEqual(events.map((e) => e.id));
    expect((await api("GET", "/v1/records/returns/r-1")).body.version).toBe(updates);
  });

  test("5. past its deadline: dead with deadline_exceeded, counted, listed, never reported delivered", async () => {
    const world = await newWorld();
    const { receiver } = world;
    receiver.fail = () => 500;
    const { api } = await start(world);
    await addEndpoint(api, receiver);
    const body = approve(0);
    const commit = await api("POST", "/v1/commits", {
      ...body,
      events: [{ ...body.events[0], deliverWithin: "1s" }],
    });
    expect(commit.status).toBe(201);
    const deliveryId = commit.body.events[0].deliveries[0].id;

    const dead = await waitFor("the delivery to go dead", async () => {
      const response = await api("GET", "/v1/deliveries?status=dead&reason=deadline_exceeded");
      return response.body.data.find((d: { id: string }) => d.id === deliveryId);
    });
    expect(dead).toMatchObject({ status: "dead", deadReason: "deadline_exceeded", deliveredAt: null });
    expect(dead.attemptCount).toBeGreaterThan(0);
    const stats = (await api("GET", "/v1/stats")).body;
    expect(stats).toMatchObject({ dead: 1, deadlineExceededTotal: 1, pending: 0 });
    const metrics = await api("GET", "/metrics");
    expect(metrics.body).toContain("outboxd_deadline_exceeded_total 1");
    expect(metrics.body).toContain("outboxd_dead_deliveries 1");
    const attempts = (await api("GET", `/v1/deliveries/${deliveryId}/attempts`)).body;
    expect(attempts.length).toBe(dead.attemptCount);
    expect(attempts.every((a: { statusCode: number }) => a.statusCode === 500)).toBe(true);
    expect(receiver.applied).toEqual([]);
    // The record change itself stands: only its announcement is in the dead-letter queue.
    expect((await api("GET", "/v1/records/returns/r-1")).body.version).toBe(1);
  });
});
