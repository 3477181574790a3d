// The endpoints' named writes (db/writer-ops.ts).

import type { Op } from "../db/op.ts";
import { run } from "../db/op.ts";
import { defineWrite } from "../db/writer-ops.ts";
import {
  countEndpoints,
  createEndpoint,
  deleteEndpoint,
  type EndpointChanges,
  type EndpointView,
  type NewEndpoint,
  type Updated,
  updateEndpoint,
} from "./endpoints.ts";
import { type Actor, commitStateChange, type SystemEventSettings } from "./system-events.ts";

/** Creates an endpoint unless `max` exist: counted in the same write, so concurrent creates cannot overshoot. */
function* createEndpointUnder(max: number, input: NewEndpoint, now: number): Op<EndpointView | undefined> {
  if ((yield* countEndpoints()) >= max) return undefined;
  return yield* createEndpoint(input, now);
}

/**
 * Stores a new sealed secret list computed from `current`, only if the stored list is still
 * `current` (false otherwise: deleted, or rotated meanwhile). Sealing needs the master key, which
 * only the main thread holds: read, rotate and seal there, then compare and set here, so two
 * rotations cannot lose a secret.
 */
function* replaceEndpointSecrets(id: string, current: string, sealed: string, now: number): Op<boolean> {
  const changed = yield* run(
    "UPDATE endpoints SET secrets = :sealed, updated_at = :now WHERE id = :id AND secrets = :current",
    { id, current, sealed, now },
  );
  return changed > 0;
}

export const createEndpointWrite = defineWrite("endpoints.create", createEndpointUnder, { again: false });
/** A change, with the system event of an enabled↔disabled change in the same transaction (DESIGN §19). */
function* updateEndpointAs(
  id: string,
  changes: EndpointChanges,
  now: number,
  by: Actor,
  settings: SystemEventSettings,
): Op<Updated | undefined> {
  const updated = yield* updateEndpoint(id, changes, now);
  if (updated?.change) yield* commitStateChange(updated.change, by, settings, now);
  return updated;
}

export const updateEndpointWrite = defineWrite("endpoints.update", updateEndpointAs, { again: false });
export const deleteEndpointWrite = defineWrite("endpoints.delete", deleteEndpoint, { again: false });
export const replaceEndpointSecretsWrite = defineWrite("endpoints.replaceSecrets", replaceEndpointSecrets, {
  again: false,
});
