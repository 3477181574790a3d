// The retry policy is a pure function (DESIGN §6 backoff, §4 Retry-After): checked with a fixed
// random source, no dispatcher and no clock.
import { describe, expect, test } from "bun:test";
import { retryAfterMs, retryDelay } from "../../src/dispatch/retry-policy.ts";

const policy = { baseMs: 5_000, capMs: 3_600_000 };
const low = () => 0;
const high = () => 1;

describe("retryDelay", () => {
  test("equal jitter: after attempt n the delay lies in [d/2, d] with d = base * 2^(n-1)", () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const d = policy.baseMs * 2 ** (attempt - 1);
      expect(retryDelay(attempt, policy, low)).toBe(Math.round(d / 2));
      expect(retryDelay(attempt, policy, high)).toBe(d);
      const mid = retryDelay(attempt, policy, () => 0.5);
      expect(mid).toBeGreaterThanOrEqual(d / 2);
      expect(mid).toBeLessThanOrEqual(d);
    }
  });

  test("the delay grows with the attempt number until the cap", () => {
    let previous = 0;
    let attempt = 1;
    for (; previous < policy.capMs; attempt++) {
      const delay = retryDelay(attempt, policy, high);
      expect(delay).toBeGreaterThan(previous);
      previous = delay;
    }
    // 5 s doubling passes 1 h after 11 attempts; from then on it stays at the cap.
    expect(attempt - 1).toBe(11);
    expect(previous).toBe(policy.capMs);
    expect(retryDelay(attempt, policy, high)).toBe(policy.capMs);
  });

  test("never exceeds the cap, and the jitter still spreads capped delays over [cap/2, cap]", () => {
    for (const attempt of [13, 14, 20, 30, 40]) {
      expect(retryDelay(attempt, policy, high)).toBe(policy.capMs);
      expect(retryDelay(attempt, policy, low)).toBe(policy.capMs / 2);
    }
  });

  test("huge attempt numbers do not overflow to Infinity or NaN", () => {
    for (const attempt of [41, 64, 1_000, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY]) {
      const delay = retryDelay(attempt, policy, high);
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBe(policy.capMs);
    }
    // A cap far above base * 2^40 still gives a finite, exact delay.
    const huge = { baseMs: 1_000, capMs: Number.MAX_SAFE_INTEGER };
    expect(retryDelay(10_000, huge, high)).toBe(1_000 * 2 ** 40);
  });

  test("attempt 0 or negative behaves like the first attempt", () => {
    expect(retryDelay(0, policy, high)).toBe(policy.baseMs);
    expect(retryDelay(-3, policy, high)).toBe(policy.baseMs);
  });

  test("small configured durations stay small (the test suites rely on it)", () => {
    const fast = { baseMs: 50, capMs: 200 };
    expect(retryDelay(1, fast, low)).toBe(25);
    expect(retryDelay(1, fast, high)).toBe(50);
    expect(retryDelay(3, fast, high)).toBe(200);
    expect(retryDelay(99, fast, high)).toBe(200);
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-11-29T10:00:00.000Z");

  test("delta-seconds", () => {
    expect(retryAfterMs("0", now)).toBe(0);
    expect(retryAfterMs("3", now)).toBe(3_000);
    expect(retryAfterMs(" 120 ", now)).toBe(120_000);
  });

  test("an HTTP-date in the future is the time until it", () => {
    expect(retryAfterMs("Sun, 29 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(retryAfterMs(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
  });

  test("an HTTP-date in the past means now (0), never a negative delay", () => {
    expect(retryAfterMs("Sun, 29 Nov 2026 09:59:00 GMT", now)).toBe(0);
  });

  test("absent or unreadable headers give null", () => {
    expect(retryAfterMs(null, now)).toBeNull();
    expect(retryAfterMs("", now)).toBeNull();
    expect(retryAfterMs("soon", now)).toBeNull();
  });

  test("numbers that are not delta-seconds are not mistaken for dates", () => {
    // Date.parse reads "-5" or "1.5" as dates in 2001, which would mean "retry now".
    expect(retryAfterMs("-5", now)).toBeNull();
    expect(retryAfterMs("1.5", now)).toBeNull();
    expect(retryAfterMs("12 ", now)).toBe(12_000);
  });
});
