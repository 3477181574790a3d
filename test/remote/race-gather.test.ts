// The pause before a group while Machines race for the ledger's chain (remote-writer.ts
// gatherMs): long enough for the commits answered by the group before to come back, short
// enough that the next reads still reach the server while the other Machine holds the lock.
import { expect, test } from "bun:test";
import { gatherMs } from "../../src/db/remote-writer.ts";

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
