// Shared pieces of the dispatcher suites: an outboxd with a real receiver and one endpoint,
// commits of events, and direct reads and writes of the database file (to check rows and to
// move time by backdating them instead of sleeping).

import { expect } from "bun:test";
import { type Args, all, get } from "../../src/db/op.ts";
import { type Received, startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestResponse, type TestServer } from "../helpers/server.ts";
import { sqlWrite } from "../helpers/test-writes.ts";

export const ok = () => new Response('{"result":"applied"}', { status: 200 });

/** Asserts the status, with the body in the failure message otherwise; returns the body. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are read freely
export function expectStatus(response: TestResponse, status: number): any {
  if (response.status !== status) {
    throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

export interface Rig {
  server: TestServer;
  receiver: TestReceiver;
  endpointId: string;
  secret: string;
  stop(): Promise<void>;
}

/** An outboxd (dispatcher on) with one endpoint at a fresh receiver that answers with `respond`. */
export async function startRig(
  env: Record<string, string> = {},
  respond: TestReceiver["respond"] = ok,
): Promise<Rig> {
  const receiver = startReceiver(respond);
  const server = await startServer(env);
  const created = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
  return {
    server,
    receiver,
    endpointId: created.id,
    secret: created.secret,
    async stop() {
      await server.stop();
      await receiver.stop();
    },
  };
}

export interface EventInput {
  type?: string;
  aggregate: string;
  payload?: unknown;
  deliverWithin?: string;
  deliverAfter?: string;
  endpoints?: string[];
  /** A client-chosen event id, known before the commit (so a receiver can be told about it). */
  id?: string;
}

export interface CommittedEvent {
  id: string;
  aggregate: string;
  sequence: number;
  deliverBy: string;
  deliveries: { id: string; endpointId: string }[];
}

/** Commits events (no records) and returns what the API answered for each. */
export async function commitEvents(
  server: TestServer,
  events: EventInput[],
  headers?: Record<string, string>,
): Promise<CommittedEvent[]> {
  const body = {
    events: events.map((e) => ({ type: e.type ?? "thing.changed", payload: e.payload ?? {}, ...e })),
  };
  return expectStatus(await server.request("POST", "/v1/commits", body, headers), 201).events;
}

/** The one delivery of an event committed with a single endpoint. */
export function onlyDelivery(event: CommittedEvent | undefined): string {
  expect(event?.deliveries.length).toBe(1);
  return event?.deliveries[0]?.id as string;
}

export interface DeliveryDbRow {
  id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: number;
  deliver_by: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  delivered_at: number | null;
  dead_reason: string | null;
  last_status_code: number | null;
  last_error: string | null;
}

/** The stored delivery row, read through the server's own database. */
export async function deliveryRow(server: TestServer, id: string): Promise<DeliveryDbRow> {
  const row = await server.outboxd.db.driver.read(
    get<DeliveryDbRow>("SELECT * FROM deliveries WHERE id = :id", { id }),
  );
  if (!row) throw new Error(`no delivery ${id}`);
  return row;
}

export function sql<R>(server: TestServer, text: string, args: Args = {}): Promise<R[]> {
  return server.outboxd.db.driver.read(all<R>(text, args));
}

/** A write through the server's writer (so it never contends with the server for the lock). */
export function exec(server: TestServer, text: string, args: Args = {}): Promise<number> {
  return server.outboxd.db.write(sqlWrite(text, args));
}

/** Makes a pending delivery due now (instead of waiting out its backoff) and wakes the dispatcher. */
export async function retryNow(server: TestServer, id: string): Promise<void> {
  const changed = await exec(
    server,
    "UPDATE deliveries SET next_attempt_at = :now WHERE id = :id AND status = 'pending' AND lease_owner IS NULL",
    { id, now: Date.now() },
  );
  expect(changed).toBe(1);
  server.outboxd.dispatcher?.wake();
}

/** Waits until the delivery row satisfies `condition`, and returns it. */
export function waitForRow(
  server: TestServer,
  id: string,
  what: string,
  condition: (row: DeliveryDbRow) => boolean,
  timeoutMs = 20_000,
): Promise<DeliveryDbRow> {
  return waitUntil(
    `delivery ${id}: ${what}`,
    async () => {
      const row = await deliveryRow(server, id);
      return condition(row) ? row : undefined;
    },
    timeoutMs,
  );
}

/** Polls until `condition` holds or `timeoutMs` passes (the shared helper, under this file's name). */
export const waitUntil = waitFor;

/** The requests for one event, in arrival order. */
export function requestsFor(receiver: TestReceiver, eventId: string): Received[] {
  return receiver.received.filter((r) => r.headers.get("webhook-id") === eventId);
}

/** A response the test releases later: for receivers that must hold a request open. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** A small deterministic PRNG (mulberry32) so "random" failures are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stable number in [0, 1) for a string and a seed: the same request always gets the same fate. */
export function fate(seed: number, key: string): number {
  let h = seed >>> 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x9e3779b1) >>> 0;
  return seeded(h)();
}

/** Plain-object headers, as the standardwebhooks library wants them. */
export function headerObject(headers: Headers): Record<string, string> {
  return Object.fromEntries(headers.entries());
}
