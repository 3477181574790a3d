// When to try a failed delivery again: exponential backoff with jitter, a pure function of the
// attempt number and an injected random source (river's retrypolicy, Standard Webhooks' rules).

export interface RetryPolicy {
  /** First retry delay, e.g. 5 s. */
  baseMs: number;
  /** Longest delay between attempts, e.g. 1 h. */
  capMs: number;
}

/**
 * Delay before attempt `attempt + 1`, after `attempt` failures (attempt ≥ 1). "Equal jitter":
 * half the exponential delay is fixed, half random, so retries spread out but never collapse
 * to zero. Overflow-safe for any attempt count.
 */
export function retryDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  const delay = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return Math.round(delay / 2 + random() * (delay / 2));
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
