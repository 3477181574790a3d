// When a remote group starts (remote-writer.ts gatherMs,
// gatherPlan): once the clients the group before answered are back and a pause is over (long
// enough for them, short enough that the next reads still reach the server while the other
// Machine holds the lock), or a round trip later at the latest.
import { expect, test } from "bun:test";
import { gatherMs, gatherPlan } from "../../src/db/remote-writer.ts";

test("the pause is the last locked reads' wait beyond the window's fastest (a round trip that found the lock free)", () => {
  expect(gatherMs([])).toBe(0);
  expect(gatherMs([3])).toBe(0);
  expect(gatherMs([3, 4, 9])).toBe(6);
  // The lock was free this time: no pause.
  expect(gatherMs([9, 4, 3])).toBe(0);
});

test("a long wait (behind another Machine's migration, say) pauses at most 20 ms", () => {
  expect(gatherMs([2, 500])).toBe(20);
});

test("the group waits for as many operations as the group before answered, besides those already waiting, a round trip past the pause at most", () => {
  // The group before: 24 operations, ended at 100 ms; 2 were waiting when this one opened.
  expect(gatherPlan([3, 4, 9], { size: 24, endedAt: 100 }, 2)).toEqual({
    target: 26,
    until: 106,
    latest: 109,
  });
  // The lock was free for the last reads: no pause, still a round trip for the clients.
  expect(gatherPlan([3, 4, 3], { size: 24, endedAt: 100 }, 0)).toEqual({
    target: 24,
    until: 100,
    latest: 103,
  });
  // A backlog: never more than the Writer's batch (256), whatever the groups before held.
  expect(gatherPlan([3], { size: 256, endedAt: 100 }, 200).target).toBe(256);
});
