// The one deadline rule (DESIGN §3): a delivery window (`deliverWithin`, a duration such as
// "24h") becomes an absolute deadline counted from when the delivery becomes due. Used by the
// commit's normalisation, the replay route and `outboxd replay --within`, so all three refuse
// the same windows: a zero or negative one (the row would go straight back to dead at the next
// sweep) and one too large to count or store.
import { parseDuration } from "../lib/duration.ts";

/** The latest deadline outboxd stores (also what ISO 8601 output can show with four digits). */
export const MAX_DEADLINE = Date.parse("9999-12-31T23:59:59Z");

export type Deadline = { ok: true; deliverBy: number } | { ok: false; detail: string };

/** Whether an absolute deadline can be stored; the detail says why not. */
export function storableDeadline(deliverBy: number): Deadline {
  if (!Number.isSafeInteger(deliverBy) || deliverBy > MAX_DEADLINE) {
    return { ok: false, detail: "is too far in the future" };
  }
  return { ok: true, deliverBy };
}

/** `within` (duration text) after `start`, or why that window is refused. */
export function deadlineWithin(start: number, within: string): Deadline {
  const ms = parseDuration(within);
  // parseDuration answers null for junk and for amounts too large to count: neither may
  // quietly become "now".
  if (ms === null || ms <= 0) return { ok: false, detail: "must be a positive duration" };
  return storableDeadline(start + ms);
}
