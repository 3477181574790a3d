// The dispatcher's hints (src/dispatch/hints.ts): which ids a claim takes by primary key, within
// each endpoint's room, and when a scan is due for the work no hint names.
import { describe, expect, test } from "bun:test";
import { Hints, SCAN_PAUSE_MS } from "../../src/dispatch/hints.ts";

const room = (limit: number, endpointRoom: Record<string, number>, endpointLimit = 4) => ({
  limit,
  endpointRoom,
  endpointLimit,
});

describe("hints", () => {
  test("taken oldest first per endpoint, within each endpoint's room and the claim's limit", () => {
    const hints = new Hints();
    hints.offer([
      { id: "a1", endpointId: "A" },
      { id: "b1", endpointId: "B" },
      { id: "a2", endpointId: "A" },
      { id: "a3", endpointId: "A" },
      { id: "a1", endpointId: "A" }, // offered twice: kept once
    ]);
    expect(hints.size).toBe(4);
    const { ids } = hints.take(room(10, { A: 2, B: 0 }), 0);
    expect(ids).toEqual(["a1", "a2"]);
    // What did not fit stays for the next claim.
    expect(hints.take(room(10, { A: 5, B: 5 }), 0).ids).toEqual(["a3", "b1"]);
    expect(hints.size).toBe(0);
  });

  test("endpoints this process holds nothing for get the claim's per-endpoint limit", () => {
    const hints = new Hints();
    hints.offer(["1", "2", "3", "4", "5", "6"].map((id) => ({ id, endpointId: "new" })));
    expect(hints.take(room(100, {}, 4), 0).ids).toEqual(["1", "2", "3", "4"]);
    expect(hints.take(room(1, {}, 4), 0).ids).toEqual(["5"]);
  });

  test("the scan gets the room the hints left; after a scan that filled no room, scans pause until woken without hints", () => {
    const hints = new Hints();
    hints.offer([{ id: "a1", endpointId: "A" }]);
    const first = hints.take(room(10, { A: 3 }), 1_000);
    expect(first.ids).toEqual(["a1"]);
    expect(first.scan).toEqual(room(9, { A: 2 }));
    // The scan found one for A of the two it had room for: nothing more is waiting unnamed.
    hints.scanned(first.scan as ReturnType<typeof room>, [{ endpointId: "A" }], 1_000);
    expect(hints.take(room(10, { A: 3 }), 1_000 + SCAN_PAUSE_MS - 1).scan).toBeNull();
    expect(hints.take(room(10, { A: 3 }), 1_000 + SCAN_PAUSE_MS).scan).not.toBeNull();
    hints.scanned(room(10, { A: 3 }), [], 2_000);
    expect(hints.take(room(10, { A: 3 }), 2_001).scan).toBeNull();
    hints.scanNow();
    expect(hints.take(room(10, { A: 3 }), 2_001).scan).not.toBeNull();
  });

  test("a scan that filled an endpoint's room is followed by another at once", () => {
    const hints = new Hints();
    hints.scanned(room(10, { A: 2 }), [{ endpointId: "A" }, { endpointId: "A" }], 5_000);
    expect(hints.take(room(10, { A: 2 }), 5_000).scan).not.toBeNull();
  });

  test("due: while a hint is kept, or once a scan is due", () => {
    const hints = new Hints();
    expect(hints.due(0)).toBe(true);
    hints.scanned(room(10, {}), [], 1_000);
    expect(hints.due(1_000)).toBe(false);
    expect(hints.due(1_000 + SCAN_PAUSE_MS)).toBe(true);
    hints.offer([{ id: "a1", endpointId: "A" }]);
    expect(hints.due(1_000)).toBe(true);
    hints.take(room(10, { A: 1 }), 1_000);
    expect(hints.due(1_000)).toBe(false);
    hints.scanNow();
    expect(hints.due(1_000)).toBe(true);
  });
});
