// POST /v1/endpoints/{id}/recover (DESIGN §19): after an outage, the endpoint's deliveries that
// went dead with deadline_exceeded, of events committed in [since, until], go back to pending,
// in chunked transactions (deliveries/replay.ts recoverDead: sequence order per aggregate, erased
// events skipped); the chunk that finds nothing more left also enables the endpoint, with its
// system event, in its own transaction.
import type { Op } from "../db/op.ts";
import type { Database } from "../db/open.ts";
import { defineWrite } from "../db/writer-ops.ts";
import { countUnrecoverable, type RecoverRange, recoverDead } from "../deliveries/replay.ts";
import { enableEndpoint } from "./endpoints.ts";
import { type Actor, commitStateChange, type SystemEventSettings } from "./system-events.ts";

export const RECOVER_CHUNK = 500;

export interface Recovered {
  replayed: number;
  skipped: number;
  enabled: true;
}

interface RecoverStep {
  range: RecoverRange;
  now: number;
  deliverBy: number;
  limit: number;
  by: Actor;
  settings: SystemEventSettings;
}

/** One chunk; when it is the last (fewer than `limit` were left), it enables the endpoint too. */
function* recoverChunk(step: RecoverStep): Op<{ replayed: number; done: boolean }> {
  const replayed = yield* recoverDead(step.range, step.now, step.deliverBy, step.limit);
  if (replayed >= step.limit) return { replayed, done: false };
  const change = yield* enableEndpoint(step.range.endpointId, step.now);
  if (change) yield* commitStateChange(change, step.by, step.settings, step.now);
  return { replayed, done: true };
}

const recoverChunkWrite = defineWrite("endpoints.recoverChunk", recoverChunk, { again: false });
export async function recoverEndpoint(
  db: Pick<Database, "write" | "driver">,
  request: Omit<RecoverStep, "limit">,
  limit = RECOVER_CHUNK,
): Promise<Recovered> {
  const skipped = await db.driver.read(countUnrecoverable(request.range, request.now));
  let replayed = 0;
  for (;;) {
    const chunk = await db.write(recoverChunkWrite({ ...request, limit }));
    replayed += chunk.replayed;
    if (chunk.done) return { replayed, skipped, enabled: true };
  }
}
