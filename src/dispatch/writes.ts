// The dispatcher's named writes (db/writer-ops.ts): made from plain data wherever the writer runs.
// What the dispatcher knows in memory (the room its slots have, its lease tokens, the time) is
// read when the write is queued and passed in, never read while the write runs.
import type { Op } from "../db/op.ts";
import { defineWrite } from "../db/writer-ops.ts";
import {
  type ClaimedDelivery,
  claimDeliveries,
  claimDeliveriesById,
  releaseLeases,
} from "../deliveries/claim.ts";
import { type CompletionItem, completeDeliveries } from "../deliveries/complete.ts";
import type { PromotedHead } from "../deliveries/heads.ts";
import { clearFailing, disableEndpoint, recordFailures } from "../endpoints/endpoints.ts";
import { commitStateChange, type SystemEventSettings } from "../endpoints/system-events.ts";
import { Hints } from "./hints.ts";
import { loadSendContext, type SendContext } from "./send-context.ts";
import type { ClaimRoom } from "./slots.ts";

/** A claim of the heads a batch of outcomes promotes, in its transaction: its lease and the room for it. */
export interface ClaimAlong {
  owner: string;
  now: number;
  leaseMs: number;
  room: ClaimRoom;
}

/** A batch of outcomes' answer, with the heads it claimed (see completeAndClaim). */
export interface ClaimedWithBatch {
  /** Per item, whether the fence let it through (CompletedBatch.recorded). */
  recorded: boolean[];
  claimed: { owner: string; claimedAt: number; rows: ClaimedDelivery[]; context: SendContext } | null;
  /** Promoted heads not claimed there: hints. */
  unclaimed: PromotedHead[];
}

/**
 * A batch of outcomes as one writer operation, and (with `along`: on a local file, while the
 * dispatcher runs) in the same transaction a claim of the heads it promoted that fit the room,
 * with their events: no claim of their own. The promotion leases every head it makes that a
 * claim could take now (heads.ts promoteAndLease: each row written once); those beyond the room
 * get their lease back here, in the same transaction.
 */
function* completeAndClaim(
  items: CompletionItem[],
  along: ClaimAlong | null,
  system: SystemEventSettings,
): Op<ClaimedWithBatch> {
  const lease = along && { owner: along.owner, now: along.now, leaseMs: along.leaseMs };
  const { recorded, promoted, leased, gone } = yield* completeDeliveries(items, lease);
  // A 410 disables its endpoint, once: the change commits its system event here (DESIGN §19).
  for (const { endpointId, at } of gone) {
    const detail = `the receiver answered 410 Gone at ${new Date(at).toISOString()}`;
    const change = yield* disableEndpoint(endpointId, "gone", detail, at);
    if (change) yield* commitStateChange(change, null, system, at);
  }
  yield* trackFailing(items, recorded, system);
  if (!along || leased.length === 0) return { recorded, claimed: null, unclaimed: promoted.map(headOf) };
  const fit = new Hints();
  fit.offer(leased);
  // Within the claim window, as any claim: what does not fit is left to hints and to other
  // dispatchers (a queue's next head claimed with its predecessor's outcome stays with this
  // dispatcher, so a wider window here would keep every queue from the others).
  const taken = new Set(fit.take(along.room, along.now).ids);
  const rows = leased.filter((head) => taken.has(head.id));
  const over = leased.filter((head) => !taken.has(head.id));
  const { owner, now } = along;
  if (over.length > 0) yield* releaseLeases(over.map(({ id }) => ({ id, owner })));
  const unclaimed = promoted.filter((head) => !taken.has(head.id)).map(headOf);
  if (rows.length === 0) return { recorded, claimed: null, unclaimed };
  const context = yield* sendContextOf(rows);
  return { recorded, claimed: { owner, claimedAt: now, rows, context }, unclaimed };
}

/**
 * disableAfter (DESIGN §19): per endpoint of the batch, a 2xx clears failing_since, and failed
 * attempts (non-2xx but 429 and 410, or no answer) are counted, which may disable it (with its
 * system event) in this transaction.
 */
function* trackFailing(items: CompletionItem[], recorded: boolean[], system: SystemEventSettings): Op<void> {
  const succeeded = new Set<string>();
  const failed = new Map<string, { n: number; at: number; error: string | null }>();
  for (let i = 0; i < items.length; i++) {
    if (!recorded[i]) continue;
    const { attempt, completion } = items[i] as CompletionItem;
    if (completion.kind === "delivered") {
      succeeded.add(attempt.endpointId);
      failed.delete(attempt.endpointId);
      continue;
    }
    const code = attempt.statusCode;
    if (code === 429 || code === 410) continue;
    const seen = failed.get(attempt.endpointId);
    const error = attempt.error ?? (code === null ? null : `the receiver answered ${code}`);
    if (seen) {
      seen.n += 1;
      seen.at = Math.max(seen.at, completion.at);
      seen.error = error;
    } else failed.set(attempt.endpointId, { n: 1, at: completion.at, error });
  }
  for (const endpointId of succeeded) yield* clearFailing(endpointId);
  for (const [endpointId, { n, at, error }] of failed) {
    const change = yield* recordFailures(endpointId, n, error, at);
    if (change) yield* commitStateChange(change, null, system, at);
  }
}

/** A promoted head as a hint (what the dispatcher keeps of it). */
function headOf({ rid, id, endpointId }: PromotedHead): PromotedHead {
  return { rid, id, endpointId };
}

/** What the sends of these claimed deliveries need (and the kind of `alsoEndpoints`). */
export function sendContextOf(claimed: ClaimedDelivery[], alsoEndpoints: string[] = []): Op<SendContext> {
  return loadSendContext(
    [...new Set(claimed.map((d) => d.eventId))],
    [...new Set([...claimed.map((d) => d.endpointId), ...alsoEndpoints])],
  );
}

// All re-runnable: the remote write path may run them again (remote-writer.ts).
const DISPATCH = { again: true };
export const completeAndClaimWrite = defineWrite("dispatch.completeAndClaim", completeAndClaim, DISPATCH);
export const claimByIdWrite = defineWrite("dispatch.claimById", claimDeliveriesById, DISPATCH);
export const claimScanWrite = defineWrite("dispatch.claimScan", claimDeliveries, DISPATCH);
export const releaseLeasesWrite = defineWrite("dispatch.releaseLeases", releaseLeases, DISPATCH);
