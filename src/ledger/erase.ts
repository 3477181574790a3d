// Erasure of personal data from the ledger (docs/ledger.md): a version's data or an event's
// payload is removed, its digest stays, so the chain still verifies and `outboxd verify` reports
// the entry as erased. Only what is history can be erased: a record's current data changes by
// a commit, and an event still waiting to be delivered keeps its payload (a pending delivery, or
// one of a fan-out not yet expanded); its dead deliveries do not block erasure and can no longer
// be replayed (deliveries/replay.ts).
import { get, type Op, run } from "../db/op.ts";

export type EraseOutcome = { erased: true } | { erased: false; reason: string };

export function* eraseVersion(
  collection: string,
  id: string,
  version: number,
  now: number,
): Op<EraseOutcome> {
  // Earlier versions are in record_versions; the current one is the records row.
  const row = yield* get<{ deleted: number; erasedAt: number | null }>(
    `SELECT deleted, erased_at AS erasedAt FROM record_versions
     WHERE collection = :collection AND id = :id AND version = :version`,
    { collection, id, version },
  );
  const name = `${collection}/${id} version ${version}`;
  if (!row) {
    const current = yield* get(
      "SELECT 1 FROM records WHERE collection = :collection AND id = :id AND version = :version",
      {
        collection,
        id,
        version,
      },
    );
    if (!current) return { erased: false, reason: `${name} does not exist` };
    return {
      erased: false,
      reason: `${name} is the record's current data: commit a new version (or a delete) first, then erase this one`,
    };
  }
  if (row.deleted === 1) return { erased: false, reason: `${name} is a delete: it holds no data` };
  if (row.erasedAt !== null) return { erased: false, reason: `${name} is already erased` };
  yield* run(
    `UPDATE record_versions SET data = NULL, erased_at = :now
     WHERE collection = :collection AND id = :id AND version = :version`,
    { collection, id, version, now },
  );
  return { erased: true };
}

export function* eraseEventPayload(eventId: string, now: number): Op<EraseOutcome> {
  const row = yield* get<{ erasedAt: number | null; digest: string | null; pending: number }>(
    `SELECT erased_at AS erasedAt, payload_digest AS digest,
       (SELECT count(*) FROM deliveries WHERE event_id = :id AND status = 'pending')
         + (SELECT count(*) FROM fan_outs WHERE event_id = :id) AS pending
     FROM events WHERE id = :id`,
    { id: eventId },
  );
  if (!row) return { erased: false, reason: `event ${eventId} does not exist` };
  if (row.digest === null)
    return { erased: false, reason: `event ${eventId} is not in the chain (from before the ledger)` };
  if (row.erasedAt !== null) return { erased: false, reason: `event ${eventId} is already erased` };
  if (row.pending > 0) {
    return { erased: false, reason: `event ${eventId} still has pending deliveries: they send its payload` };
  }
  yield* run("UPDATE events SET payload = 'null', erased_at = :now WHERE id = :id", { id: eventId, now });
  return { erased: true };
}
