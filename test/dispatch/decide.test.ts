// The per-attempt decision is a pure function (DESIGN §4 receiver answers, §6 backoff): every
// rule checked with a fixed clock and random source, no HTTP and no database.
import { describe, expect, test } from "bun:test";
import { decide, LAST_ATTEMPT_MARGIN_MS } from "../../src/dispatch/decide.ts";

const policy = { baseMs: 5_000, capMs: 3_600_000 };
const now = 1_000_000_000_000;
const row = { attemptCount: 1, availableAt: now - 250, deliverBy: now + 86_400_000 };
const answer = (statusCode: number | null, retryAfter: string | null = null) => ({ statusCode, retryAfter });
const low = () => 0;

describe("decide", () => {
  test("any 2xx is delivered, with the latency counted from when it became due", () => {
    for (const status of [200, 201, 204, 299]) {
      expect(decide(row, answer(status), now, policy, low)).toEqual({
        kind: "delivered",
        at: now,
        latencyMs: 250,
      });
    }
  });

  test("410 Gone disables the endpoint instead of retrying, even past the deadline", () => {
    expect(decide(row, answer(410), now, policy, low)).toEqual({ kind: "gone", at: now });
    expect(decide({ ...row, deliverBy: now }, answer(410), now, policy, low).kind).toBe("gone");
  });

  test("a failure at or after the deadline is dead with deadline_exceeded", () => {
    for (const status of [500, null, 429]) {
      expect(decide({ ...row, deliverBy: now }, answer(status), now, policy, low)).toEqual({
        kind: "dead",
        at: now,
        reason: "deadline_exceeded",
      });
    }
  });

  test("other failures retry after the backoff", () => {
    expect(decide(row, answer(500), now, policy, low)).toEqual({
      kind: "retry",
      at: now,
      nextAttemptAt: now + 2_500,
    });
    expect(decide({ ...row, attemptCount: 3 }, answer(null), now, policy, low)).toEqual({
      kind: "retry",
      at: now,
      nextAttemptAt: now + 10_000,
    });
  });

  test("429/503 wait what Retry-After asks (capped), never less than the backoff", () => {
    expect(decide(row, answer(429, "120"), now, policy, low)).toMatchObject({ nextAttemptAt: now + 120_000 });
    expect(decide(row, answer(503, "0"), now, policy, low)).toMatchObject({ nextAttemptAt: now + 2_500 });
    expect(decide(row, answer(429, "999999"), now, policy, low)).toMatchObject({
      nextAttemptAt: now + policy.capMs,
    });
    // Only 429 and 503 are asked to slow down by the header.
    expect(decide(row, answer(500, "120"), now, policy, low)).toMatchObject({ nextAttemptAt: now + 2_500 });
  });

  test("a retry that would pass the deadline becomes one last attempt shortly before it", () => {
    const soon = { ...row, deliverBy: now + 2_000 };
    expect(decide(soon, answer(500), now, policy, low)).toMatchObject({
      kind: "retry",
      nextAttemptAt: now + 2_000 - LAST_ATTEMPT_MARGIN_MS,
    });
    // Less than the margin left: the row waits for its deadline, when the sweep dead-letters it.
    const tooSoon = { ...row, deliverBy: now + LAST_ATTEMPT_MARGIN_MS / 2 };
    expect(decide(tooSoon, answer(500), now, policy, low)).toMatchObject({
      nextAttemptAt: tooSoon.deliverBy,
    });
  });
});
