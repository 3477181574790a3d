// How much an endpoint holds claimed ahead (src/dispatch/slots.ts): many when it answers fast,
// fewer when slow, only what it may send once in trouble.
import { describe, expect, test } from "bun:test";
import type { ClaimedDelivery } from "../../src/deliveries/claim.ts";
import { CLAIM_AHEAD, FIRST_AHEAD, Slots } from "../../src/dispatch/slots.ts";

const LIMIT = 8;

function delivery(endpointId: string, n: number): ClaimedDelivery {
  return {
    id: `dlv_${endpointId}_${n}`,
    eventId: `evt_${n}`,
    endpointId,
    aggregate: `a/${n}`,
    sequence: 1,
    previousSequence: null,
    attemptCount: 1,
    availableAt: 0,
    deliverBy: Number.MAX_SAFE_INTEGER,
  };
}

/** Sends `n` deliveries to `endpointId`, each answered after `ms` (on the slots' clock). */
function paced(slots: Slots, endpointId: string, n: number, ms: number, trouble = false): void {
  let now = 1_000;
  slots.add(
    Array.from({ length: n }, (_, i) => delivery(endpointId, i)),
    Number.MAX_SAFE_INTEGER,
  );
  for (let i = 0; i < n; i++) {
    const started = slots.next(now, () => {});
    expect(started).not.toBeNull();
    now += ms;
    slots.finished(endpointId, now - ms, trouble, now);
  }
}

describe("claims ahead", () => {
  test("before any answer, an endpoint holds FIRST_AHEAD times its limit ahead", () => {
    const slots = new Slots({ concurrency: 64, endpointConcurrency: LIMIT });
    expect(slots.aheadOf("new")).toBe(FIRST_AHEAD * LIMIT);
  });

  test("a fast endpoint holds CLAIM_AHEAD times its limit; a slow one only what it sends within about 2 s", () => {
    const slots = new Slots({ concurrency: 64, endpointConcurrency: LIMIT });
    paced(slots, "fast", 20, 2);
    expect(slots.aheadOf("fast")).toBe(CLAIM_AHEAD * LIMIT);
    paced(slots, "slow", 20, 700);
    expect(slots.aheadOf("slow")).toBe(2 * LIMIT);
    paced(slots, "slower", 20, 5_000);
    expect(slots.aheadOf("slower")).toBe(LIMIT);
  });

  test("an endpoint in trouble holds no more than it may send", () => {
    const slots = new Slots({ concurrency: 64, endpointConcurrency: LIMIT });
    paced(slots, "down", 3, 1, true);
    expect(slots.limitOf("down")).toBeLessThan(LIMIT);
    expect(slots.aheadOf("down")).toBe(slots.limitOf("down"));
  });
});

describe("claim room", () => {
  test("room kept for sends whose outcomes are not written yet is left out of an endpoint's room", () => {
    const slots = new Slots({ concurrency: 64, endpointConcurrency: LIMIT });
    paced(slots, "fast", 20, 2);
    slots.add([delivery("fast", 100)], Number.MAX_SAFE_INTEGER);
    const full = slots.claimRoom().endpointRoom.fast as number;
    expect(full).toBeGreaterThan(10);
    expect(slots.claimRoom((id) => (id === "fast" ? 10 : 0)).endpointRoom.fast).toBe(full - 10);
    // Never below nothing.
    expect(slots.claimRoom(() => full + 5).endpointRoom.fast).toBe(0);
  });
});

describe("ready queue", () => {
  test("long runs of adds and starts keep each endpoint's deliveries in claim order", () => {
    const slots = new Slots({ concurrency: 64, endpointConcurrency: 1 });
    const started: string[] = [];
    let next = 0;
    const add = (n: number) => {
      slots.add(
        Array.from({ length: n }, () => delivery("e", next++)),
        Number.MAX_SAFE_INTEGER,
      );
    };
    add(3_000);
    for (let round = 0; round < 5_000; round++) {
      const d = slots.next(1, () => {});
      if (!d) break;
      started.push(d.id);
      slots.finished("e", 1, false, 1);
      if (round % 1_000 === 999) add(500);
    }
    expect(started).toEqual(Array.from({ length: 5_000 }, (_, n) => `dlv_e_${n}`));
    expect(slots.readyAt("e")).toBe(500);
  });

  test("deliveries past their start-by time are dropped in order, the rest still start", () => {
    const slots = new Slots({ concurrency: 64, endpointConcurrency: 8 });
    slots.add([delivery("e", 0), delivery("e", 1)], 10);
    slots.add([delivery("e", 2)], 100);
    const dropped: string[] = [];
    expect(slots.next(50, (d) => dropped.push(d.id))?.id).toBe("dlv_e_2");
    expect(dropped).toEqual(["dlv_e_0", "dlv_e_1"]);
    expect(slots.ready).toBe(0);
  });
});
