// When to try a failed delivery again: exponential backoff with jitter, a pure function of the
// attempt number and an injected random source (river's retrypolicy, Standard Webhooks' rules).

import { parseDuration } from "../lib/duration.ts";

export interface RetryPolicy {
  /** First retry delay, e.g. 5 s. */
  baseMs: number;
  /** Longest delay between attempts, e.g. 1 h. */
  capMs: number;
  /**
   * An endpoint's retrySchedule (DESIGN §19), in ms: the waits before attempts 2, 3, …, the last
   * repeating; replaces the exponential backoff when set.
   */
  schedule?: readonly number[] | null | undefined;
}

/** The most of a schedule's wait that is cut at random, so retries of many deliveries spread. */
export const SCHEDULE_JITTER = 0.1;

/**
 * Delay before attempt `attempt + 1`, after `attempt` failures (attempt ≥ 1). "Equal jitter":
 * half the exponential delay is fixed, half random, so retries spread out but never collapse
 * to zero. Overflow-safe for any attempt count.
 */
export function retryDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const { schedule } = policy;
  if (schedule && schedule.length > 0) {
    const wait = schedule[Math.min(Math.max(attempt - 1, 0), schedule.length - 1)] as number;
    return Math.round(wait * (1 - SCHEDULE_JITTER * random()));
  }
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  const delay = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return Math.round(delay / 2 + random() * (delay / 2));
}

/** The longest a `Retry-After` may hold a delivery back: the cap, or a schedule's last wait when longer. */
export function retryAfterCap(policy: RetryPolicy): number {
  const last = policy.schedule?.at(-1);
  return last === undefined ? policy.capMs : Math.max(last, policy.capMs);
}

/** A stored retrySchedule (JSON text of durations) in ms; parsed once per text. */
const parsedSchedules = new Map<string, number[]>();
export function scheduleOf(text: string | null | undefined): number[] | null {
  if (!text) return null;
  let parsed = parsedSchedules.get(text);
  if (!parsed) {
    parsed = (JSON.parse(text) as string[]).map((wait) => parseDuration(wait) ?? 0);
    if (parsedSchedules.size > 10_000) parsedSchedules.clear();
    parsedSchedules.set(text, parsed);
  }
  return parsed;
}

/**
 * Milliseconds a `Retry-After` header asks to wait (delta-seconds or an HTTP date), or null
 * when absent or unreadable.
 */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with a day name. Date.parse alone is lenient enough to read
  // "-5" or "1.5" as dates in 2001, which would turn junk into "retry right now".
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
