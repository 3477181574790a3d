// One endpoint's trouble never holds up another: receivers that never answer may
// fill the global pool, but a healthy endpoint still gets its send at once; an endpoint that
// times out or asks to slow down gets fewer slots (adaptive limit), and all back once it answers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import type { ClaimedDelivery } from "../../src/deliveries/claim.ts";
import { isTrouble, Slots, START_LIMIT } from "../../src/dispatch/slots.ts";
import { startReceiver, type TestReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { commitEvents, expectStatus, onlyDelivery, waitForRow, waitUntil } from "./harness.ts";

describe("receivers that never answer (OUTBOXD_CONCURRENCY=4, OUTBOXD_ENDPOINT_CONCURRENCY=2, default send timeout)", () => {
  let server: TestServer;
  const receivers: TestReceiver[] = [];
  const held: (() => void)[] = [];
  let answering = false;
  beforeAll(async () => {
    server = await startServer({ OUTBOXD_CONCURRENCY: "4", OUTBOXD_ENDPOINT_CONCURRENCY: "2" });
  });
  afterAll(async () => {
    answering = true;
    for (const release of held.splice(0)) release();
    await server.stop();
    for (const receiver of receivers) await receiver.stop();
  });

  async function endpoint(respond: TestReceiver["respond"]) {
    const receiver = startReceiver(respond);
    receivers.push(receiver);
    const created = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
    return { receiver, endpointId: created.id as string };
  }

  test("fill the global pool, yet a healthy endpoint's deliveries go out while they still hang", async () => {
    const late = () => new Response("late", { status: 200 });
    const hang = () =>
      answering ? late() : new Promise<Response>((resolve) => held.push(() => resolve(late())));
    const stuck = [await endpoint(hang), await endpoint(hang)];
    for (const { endpointId } of stuck) {
      await commitEvents(
        server,
        Array.from({ length: 6 }, (_, i) => ({
          aggregate: `hang/${endpointId}/${i}`,
          endpoints: [endpointId],
        })),
      );
    }
    // Two per hanging endpoint: the whole pool of 4 is held by receivers that do not answer.
    await waitUntil("the pool full of hanging sends", () => held.length === 4);
    expect(server.outboxd.dispatcher?.inFlight).toBe(4);

    const healthy = await endpoint(() => new Response('{"result":"applied"}', { status: 200 }));
    const events = await commitEvents(
      server,
      Array.from({ length: 5 }, (_, i) => ({ aggregate: `healthy/${i}`, endpoints: [healthy.endpointId] })),
    );
    for (const event of events) {
      await waitForRow(server, onlyDelivery(event), "the healthy delivery", (r) => r.status === "delivered");
    }
    // Delivered while every hanging send was still waiting: not queued behind any of them.
    expect(held.length).toBe(4);
    expect(healthy.receiver.received.length).toBe(5);
    for (const { receiver } of stuck) expect(receiver.received.length).toBe(2);
  });
});

describe("adaptive per-endpoint limit", () => {
  const delivery = (id: string, endpointId = "ep_a"): ClaimedDelivery => ({
    id,
    eventId: `evt_${id}`,
    endpointId,
    aggregate: `agg/${id}`,
    sequence: 1,
    previousSequence: null,
    attemptCount: 1,
    availableAt: 0,
    deliverBy: Number.MAX_SAFE_INTEGER,
  });
  const drop = () => {
    throw new Error("nothing should be dropped");
  };
  const startAll = (slots: Slots, now: number) => {
    const started: ClaimedDelivery[] = [];
    for (let d = slots.next(now, drop); d; d = slots.next(now, drop)) started.push(d);
    return started;
  };

  test("timeouts halve it once per round down to one probe; successes give the slots back", () => {
    const slots = new Slots({ concurrency: 64, endpointConcurrency: 8 });
    slots.add(
      Array.from({ length: 20 }, (_, i) => delivery(`d${i}`)),
      Number.MAX_SAFE_INTEGER,
    );
    expect(startAll(slots, 0)).toHaveLength(8);
    // The whole round of 8 times out: one halving (they all began before the first decrease).
    for (let i = 0; i < 8; i++) slots.finished("ep_a", 0, true, 100);
    expect(slots.limitOf("ep_a")).toBe(4);
    expect(startAll(slots, 100)).toHaveLength(4);
    for (let i = 0; i < 4; i++) slots.finished("ep_a", 100, true, 200);
    expect(slots.limitOf("ep_a")).toBe(2);
    expect(startAll(slots, 200)).toHaveLength(2);
    for (let i = 0; i < 2; i++) slots.finished("ep_a", 200, true, 300);
    expect(startAll(slots, 300)).toHaveLength(1);
    slots.finished("ep_a", 300, true, 400);
    expect(slots.limitOf("ep_a")).toBe(1);
    // It answers again: one slot back per success, up to the configured limit.
    expect(startAll(slots, 400)).toHaveLength(1);
    slots.finished("ep_a", 400, false, 410);
    expect(slots.limitOf("ep_a")).toBe(2);
    expect(startAll(slots, 410)).toHaveLength(2);
    expect(slots.inFlightAt("ep_a")).toBe(2);
  });

  test("an endpoint starts at START_LIMIT and earns the rest by answering; one that never answers never holds more", () => {
    const slots = new Slots({ concurrency: 1024, endpointConcurrency: 64 });
    const many = (endpointId: string) =>
      Array.from({ length: 200 }, (_, i) => delivery(`${endpointId}_${i}`, endpointId));
    slots.add([...many("ep_hung"), ...many("ep_ok")], Number.MAX_SAFE_INTEGER);
    const first = startAll(slots, 0);
    expect(first.filter((d) => d.endpointId === "ep_hung")).toHaveLength(START_LIMIT);
    expect(first.filter((d) => d.endpointId === "ep_ok")).toHaveLength(START_LIMIT);
    // The healthy one answers: one more slot per answer (doubling each round) up to the setting.
    let now = 0;
    for (let round = 0; round < 4; round++) {
      now += 10;
      for (let i = slots.inFlightAt("ep_ok"); i > 0; i--) slots.finished("ep_ok", now - 10, false, now);
      startAll(slots, now);
    }
    expect(slots.limitOf("ep_ok")).toBe(64);
    expect(slots.inFlightAt("ep_ok")).toBe(64);
    // The hanging one still holds what it started with, and its timeouts halve that.
    expect(slots.inFlightAt("ep_hung")).toBe(START_LIMIT);
    for (let i = 0; i < START_LIMIT; i++) slots.finished("ep_hung", 0, true, now);
    expect(slots.limitOf("ep_hung")).toBe(START_LIMIT / 2);
  });

  test("an endpoint that goes idle keeps the limit it earned: its next burst does not start again at START_LIMIT", () => {
    const slots = new Slots({ concurrency: 1024, endpointConcurrency: 64 });
    const burst = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => delivery(`${tag}_${i}`, "ep_ok"));
    slots.add(burst("a", 200), Number.MAX_SAFE_INTEGER);
    let now = 0;
    startAll(slots, now);
    // Answers earn it its whole limit; then everything is answered and it has nothing left (idle).
    while (slots.inFlightAt("ep_ok") > 0) {
      now += 10;
      for (let i = slots.inFlightAt("ep_ok"); i > 0; i--) slots.finished("ep_ok", now - 10, false, now);
      startAll(slots, now);
    }
    expect(slots.readyAt("ep_ok")).toBe(0);
    // The next burst starts as many as it had earned, not START_LIMIT.
    slots.add(burst("b", 200), Number.MAX_SAFE_INTEGER);
    expect(startAll(slots, now)).toHaveLength(64);
    // Trouble still halves it (and what it is forgotten with is what it starts from next time).
    for (let i = 0; i < 64; i++) slots.finished("ep_ok", now, true, now + 1);
    expect(slots.limitOf("ep_ok")).toBe(32);
  });

  test("with the default limits, eight receivers that never answer leave a healthy endpoint its whole limit", () => {
    const { concurrency, endpointConcurrency } = loadConfig({ OUTBOXD_ADMIN_TOKEN: "x".repeat(32) });
    const slots = new Slots({ concurrency, endpointConcurrency });
    const hung = Array.from({ length: 8 }, (_, e) =>
      Array.from({ length: 40 }, (_, i) => delivery(`h${e}_${i}`, `ep_hung${e}`)),
    ).flat();
    slots.add(hung, Number.MAX_SAFE_INTEGER);
    expect(startAll(slots, 0)).toHaveLength(8 * START_LIMIT);
    slots.add(
      Array.from({ length: 400 }, (_, i) => delivery(`ok_${i}`, "ep_ok")),
      Number.MAX_SAFE_INTEGER,
    );
    // The hanging sends never end; the healthy endpoint's answers earn it its whole limit.
    let now = 0;
    for (let round = 0; round < 6; round++) {
      startAll(slots, now);
      now += 10;
      for (let i = slots.inFlightAt("ep_ok"); i > 0; i--) slots.finished("ep_ok", now - 10, false, now);
    }
    startAll(slots, now);
    expect(slots.inFlightAt("ep_ok")).toBe(endpointConcurrency);
    for (let e = 0; e < 8; e++) expect(slots.inFlightAt(`ep_hung${e}`)).toBe(START_LIMIT);
  });

  test("a full pool still lets an endpoint with nothing in flight start one send, fairly in turn", () => {
    const slots = new Slots({ concurrency: 4, endpointConcurrency: 4 });
    slots.add(
      [delivery("h1", "ep_h"), delivery("h2", "ep_h"), delivery("h3", "ep_h"), delivery("h4", "ep_h")],
      1e15,
    );
    expect(startAll(slots, 0)).toHaveLength(4);
    slots.add([delivery("g1", "ep_g"), delivery("g2", "ep_g")], 1e15);
    // One for the idle endpoint, not two: the pool is full.
    expect(startAll(slots, 0).map((d) => d.id)).toEqual(["g1"]);
  });

  test("timeouts, refused connections and slow-down answers count as trouble; other answers do not", () => {
    expect([null, 429, 502, 503, 504].every(isTrouble)).toBe(true);
    expect([200, 204, 400, 404, 410, 500].some(isTrouble)).toBe(false);
  });
});
