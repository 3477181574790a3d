// The pull endpoints' named writes (db/writer-ops.ts): leases, acks and lapsed leases, each
// checked against its endpoint in the same transaction; the retry policy travels as its settings.
import { liveTokens } from "../auth/tokens.ts";
import { all, get, type Op } from "../db/op.ts";
import { defineWrite } from "../db/writer-ops.ts";
import {
  type AckResult,
  ackDeliveries,
  type FailedRow,
  type LeaseRef,
  type Nack,
} from "../deliveries/ack.ts";
import type { Completion } from "../deliveries/complete.ts";
import type { LeaseRequest } from "../deliveries/lease.ts";
import { type ExpiredLease, expireConsumerLeases } from "../deliveries/lease-expiry.ts";
import { retryAfter } from "../dispatch/decide.ts";
import { retryDelay, scheduleOf } from "../dispatch/retry-policy.ts";
import { problems } from "../lib/problem.ts";
import { leaseMessages, type Pulled } from "./messages.ts";

export type Purpose = "lease" | "ack";

/** The backoff's settings (OUTBOXD_RETRY_BASE, OUTBOXD_RETRY_CAP). */
export interface RetrySettings {
  baseMs: number;
  capMs: number;
}

/** The endpoint check of checkEndpoint, as a statement of the caller's read or write. */
export function* endpointCheck(endpointId: string, purpose: Purpose): Op<void> {
  const row = yield* get<{ kind: string; disabled: number }>(
    "SELECT kind, disabled FROM endpoints WHERE id = :id",
    { id: endpointId },
  );
  if (!row) throw problems.notFound(`endpoint ${endpointId} does not exist`);
  if (row.kind !== "pull") {
    throw problems.conflict(
      "not-a-pull-endpoint",
      `endpoint ${endpointId} is a ${row.kind} endpoint: its deliveries are sent, not pulled`,
    );
  }
  if (purpose === "lease" && row.disabled === 1) {
    throw problems.conflict("endpoint-disabled", `endpoint ${endpointId} is disabled; enable it first`);
  }
}

/**
 * Of these open streams, the ones that must close: their token revoked, their endpoint deleted,
 * disabled or no longer a pull endpoint. One read for all of them.
 */
export function* deadStreams<S extends { endpointId: string; holder: string | null }>(
  streams: readonly S[],
): Op<S[]> {
  const endpointIds = [...new Set(streams.map((s) => s.endpointId))];
  const open = yield* all<{ id: string }>(
    `SELECT id FROM endpoints WHERE id IN (SELECT value FROM json_each(:ids)) AND kind = 'pull' AND disabled = 0`,
    { ids: JSON.stringify(endpointIds) },
  );
  const liveEndpoints = new Set(open.map((r) => r.id));
  const holders = [...new Set(streams.flatMap((s) => (s.holder === null ? [] : [s.holder])))];
  const live = yield* liveTokens(holders);
  return streams.filter(
    (s) => !liveEndpoints.has(s.endpointId) || (s.holder !== null && !live.has(s.holder)),
  );
}

/** A nack or a lapsed lease: at `retryAfter` if the consumer asked, else the backoff. */
function failureDecision(retry: RetrySettings) {
  return (row: FailedRow, asked: number | null, now: number): Completion =>
    retryAfter(
      row,
      now,
      asked ?? retryDelay(row.attemptCount, { ...retry, schedule: scheduleOf(row.retrySchedule) }),
    );
}

/** The consumer's token must still be live when it leases (null: OUTBOXD_ADMIN_TOKEN, not stored). */
export function* holderCheck(tokenId: string | null): Op<void> {
  if (tokenId === null) return;
  if (!(yield* liveTokens([tokenId])).has(tokenId)) throw problems.unauthorized("the token was revoked");
}

/**
 * Leases what is claimable now; with `check`, after the endpoint check for leasing and the check
 * that the consumer's token (`holder`) is live, in the same transaction: a revoked token, a
 * deleted or disabled endpoint leases nothing.
 */
function* lease(check: boolean, request: LeaseRequest, holder: string | null = null): Op<Pulled[]> {
  if (check) {
    yield* endpointCheck(request.endpointId, "lease");
    yield* holderCheck(holder);
  }
  return yield* leaseMessages(request);
}

/** Acks and nacks of one endpoint's deliveries, after the endpoint check for acking. */
function* ack(
  endpointId: string,
  now: number,
  answers: { acks: LeaseRef[]; nacks: Nack[] },
  retry: RetrySettings,
): Op<AckResult> {
  yield* endpointCheck(endpointId, "ack");
  return yield* ackDeliveries({ endpointId, now, ...answers, decideFailure: failureDecision(retry) });
}

function expireLeases(now: number, retry: RetrySettings, limit: number): Op<ExpiredLease[]> {
  return expireConsumerLeases(now, failureDecision(retry), limit);
}

export const pullLeaseWrite = defineWrite("pull.lease", lease, { again: false });
export const pullAckWrite = defineWrite("pull.ack", ack, { again: false });
export const expireConsumerLeasesWrite = defineWrite("pull.expireLeases", expireLeases, { again: false });
