// outboxd's own events about endpoints (DESIGN §19): every change of an endpoint between enabled
// and disabled commits one event, through the same commit path as any client's (commitOp: the
// aggregate's sequence, fan-out, the ledger), in the transaction that changes the endpoint, so
// the event exists exactly when the change does. They match only endpoint patterns that start
// with `outboxd.` (patterns.ts) and never the endpoint they are about.
import { type Committer, commitOp } from "../commit/commit-op.ts";
import type { Op } from "../db/op.ts";
import { ENDPOINT_DISABLED_TYPE, ENDPOINT_ENABLED_TYPE } from "../event-types/builtin.ts";
import { payloadDigest } from "../ledger/append.ts";
import { iso } from "../lib/time.ts";
import type { StateChange } from "./endpoints.ts";

/** What a system event's commit needs of the configuration. */
export interface SystemEventSettings {
  /** OUTBOXD_DEFAULT_DELIVER_WITHIN: the events' deadline from their commit. */
  deliverWithinMs: number;
}

/** Who changed the endpoint: the acting token, or null when outboxd did (a 410, disableAfter). */
export type Actor = Pick<Committer, "tokenId" | "tokenName"> | null;

export function systemAggregate(endpointId: string): string {
  return `outboxd/endpoints/${endpointId}`;
}

/** The event's payload, by its built-in schema (src/event-types/builtin.ts); never the URL. */
function payloadOf(change: StateChange, by: Actor): Record<string, unknown> {
  if (change.to === "disabled") {
    return {
      endpointId: change.endpointId,
      description: change.description,
      reason: change.reason,
      failingSince: iso(change.failingSince),
      lastError: change.lastError,
    };
  }
  return {
    endpointId: change.endpointId,
    description: change.description,
    enabledBy: by && { tokenId: by.tokenId, tokenName: by.tokenName },
  };
}

/** Commits the event of `change` in the running transaction. */
export function* commitStateChange(
  change: StateChange,
  by: Actor,
  settings: SystemEventSettings,
  now: number,
): Op<void> {
  const payload = JSON.stringify(payloadOf(change, by));
  yield* commitOp({
    by: by && { tokenId: by.tokenId, tokenName: by.tokenName },
    records: [],
    events: [
      {
        id: undefined,
        type: change.to === "disabled" ? ENDPOINT_DISABLED_TYPE : ENDPOINT_ENABLED_TYPE,
        aggregate: systemAggregate(change.endpointId),
        payload,
        payloadDigest: payloadDigest(payload),
        deliverAfter: null,
        deliverBy: now + settings.deliverWithinMs,
        endpoints: undefined,
        excludeEndpoint: change.endpointId,
      },
    ],
    idempotency: undefined,
    traceparent: undefined,
    conflictStatus: 409,
    maxDeliveries: Number.MAX_SAFE_INTEGER,
    now,
  });
}
