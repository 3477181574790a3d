// Transition: (nothing) → pending. A commit's fan-out inserts one delivery per target endpoint,
// in the commit's own transaction (DESIGN §1.1), so a delivery exists iff its event does.
// Invariant kept here: the new row is its queue's head iff the queue has no pending row yet
// (heads.ts).
import { type Op, run } from "../db/op.ts";
import { newId } from "../lib/ids.ts";
import { IS_FIRST_IN_QUEUE } from "./heads.ts";

export interface NewDelivery {
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  type: string;
  /** When it becomes due: the later of the commit and deliverAfter. */
  availableAt: number;
  deliverBy: number;
  now: number;
}

const INSERT = `INSERT INTO deliveries (id, event_id, endpoint_id, aggregate, sequence, event_type, status,
    is_head, available_at, next_attempt_at, deliver_by, created_at)
  VALUES (:id, :eventId, :endpointId, :aggregate, :sequence, :type, 'pending',
    ${IS_FIRST_IN_QUEUE}, :availableAt, :availableAt, :deliverBy, :now)`;

/** Inserts a pending delivery; returns its id. */
export function* enqueueDelivery(delivery: NewDelivery): Op<string> {
  const id = newId("dlv", delivery.now);
  yield* run(INSERT, { id, ...delivery });
  return id;
}
