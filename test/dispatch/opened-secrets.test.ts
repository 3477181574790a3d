// Which of an endpoint's secrets sign a send (src/dispatch/dispatcher.ts OpenedSecrets): the same
// answer as activeSecrets at every moment, though it is worked out again only when the time passes
// an expiry (or goes back).
import { describe, expect, test } from "bun:test";
import { OpenedSecrets } from "../../src/dispatch/dispatcher.ts";
import { activeSecrets, type StoredSecret } from "../../src/endpoints/secrets.ts";

const stored: StoredSecret[] = [
  { secret: "whsec_current", expiresAt: null },
  { secret: "whsec_old", expiresAt: 2_000 },
  { secret: "whsec_older", expiresAt: 1_000 },
];

describe("opened secrets", () => {
  test("sign with what activeSecrets says at each moment, forward and back in time", () => {
    const opened = new OpenedSecrets(stored);
    for (const now of [0, 500, 999, 1_000, 1_001, 1_999, 2_000, 5_000, 1_500, 10, 3_000, 999])
      expect(opened.activeAt(now)).toEqual(activeSecrets(stored, now));
  });

  test("a list that does not change is the same list until an expiry passes", () => {
    const opened = new OpenedSecrets(stored);
    const first = opened.activeAt(1_100);
    expect(opened.activeAt(1_900)).toBe(first);
    expect(opened.activeAt(2_000)).toEqual(["whsec_current"]);
  });
});
