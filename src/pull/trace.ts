// The outboxd.deliver spans of pull attempts (DESIGN §14): an ack, a nack or a lapsed lease is
// an attempt, so each gets a span, a child of the trace context its event stored at commit, as
// a webhook send does. Called only with tracing on: the ack and sweep paths stay as they are
// without it. The stored contexts are read after the write, in one read for the whole batch,
// from a reader (the write's statements and its RETURNING columns are the same either way).
import { all, type Op } from "../db/op.ts";
import type { Database } from "../db/open.ts";
import { NACKED } from "../deliveries/ack.ts";
import type { Completion } from "../deliveries/complete.ts";
import { LEASE_EXPIRED } from "../deliveries/lease-expiry.ts";
import type { Logger } from "../ops/log.ts";
import type { PullResult, Tracing } from "../ops/tracing.ts";

/** One pull attempt that was recorded (an Answered of ack.ts, an ExpiredLease of lease-expiry.ts). */
export interface TracedAttempt {
  eventId: string;
  aggregate: string;
  sequence: number;
  attempt: number;
  completion: Completion;
}

/** What ended the failed attempts of one batch: a consumer's nack or a lapsed lease. */
export type Failure = "nacked" | "lease_expired";

/**
 * Records one outboxd.deliver span per attempt, all begun at `startedAt`; the failed ones ended
 * by `failure`. Never throws: the attempts are recorded already, a span lost is only logged.
 */
export async function traceAttempts(
  deps: { db: Database; tracing: Tracing; logger: Logger },
  startedAt: number,
  attempts: readonly (TracedAttempt & { endpointId: string })[],
  failure: Failure,
): Promise<void> {
  const { db, tracing, logger } = deps;
  try {
    const parents = await db.driver.read(storedTraceparents(attempts.map((a) => a.eventId)));
    const failed: PullResult = {
      acked: false,
      errorType: failure,
      error: failure === "nacked" ? NACKED : LEASE_EXPIRED,
    };
    for (const a of attempts) {
      const { eventId, endpointId, aggregate, sequence, attempt } = a;
      tracing.delivered(
        { eventId, endpointId, aggregate, sequence, attempt },
        parents.get(eventId) ?? null,
        startedAt,
        a.completion.kind === "delivered" ? ACKED : failed,
      );
    }
  } catch (error) {
    logger.log("warn", "tracing: pull attempts not traced", { error: String(error) });
  }
}

const ACKED: PullResult = { acked: true };

/** The trace context each event stored at commit (absent: none was stored). */
function* storedTraceparents(eventIds: string[]): Op<Map<string, string>> {
  const rows = yield* all<{ id: string; traceparent: string }>(
    `SELECT id, traceparent FROM events
     WHERE id IN (SELECT value FROM json_each(:ids)) AND traceparent IS NOT NULL`,
    { ids: JSON.stringify([...new Set(eventIds)]) },
  );
  return new Map(rows.map((r) => [r.id, r.traceparent]));
}
