// Event-id replay (DESIGN §3 `id`): a commit whose event ids are all already stored, by the same
// token, with the same content, all by one commit (the first), and whose records equal the first
// commit's, is a retry of that commit (a client without Idempotency-Key). It answers the first commit's response — the stored
// one while an Idempotency-Key kept it, else rebuilt from the ledger — and writes nothing: no
// commit, no ledger entry, no record version. Any other reuse of a stored event id is 409
// `event-id-taken`, with the same answer whatever the content, so it never tells whether a guess
// of another token's payload was right.
import { all, get, type Op } from "../db/op.ts";
import { unexpandedDeliveries } from "../deliveries/enqueue.ts";
import { dataDigest, payloadDigest } from "../ledger/append.ts";
import { canonicalJson } from "../lib/canonical-json.ts";
import { problems } from "../lib/problem.ts";
import { iso } from "../lib/time.ts";
import type { CommitInput, CommitOutcome, CommitResult, EventWrite, WrittenRecord } from "./types.ts";

export const EVENT_SQL = {
  // The token that committed the event comes from its commit row (NULL only for events whose
  // commit was pruned before the ledger existed); for an approved proposal it is the proposer's
  // (DESIGN §3 `id`). This runs only for a client-chosen id, so the scan of the small
  // proposals table is rare.
  findEvent: `SELECT e.type, e.aggregate, e.payload, e.deliver_after AS deliverAfter, e.sequence,
      e.deliver_by AS deliverBy, e.commit_id AS commitId, e.payload_digest AS payloadDigest, coalesce(p.proposed_by_token_id, c.token_id) AS tokenId
    FROM events e LEFT JOIN commits c ON c.id = e.commit_id LEFT JOIN proposals p ON p.commit_id = e.commit_id
    WHERE e.id = :id`,
};

const SQL = {
  commit: `SELECT created_at AS at, record_keys AS recordKeys, event_pos AS eventPos, event_count AS eventCount
    FROM commits WHERE id = :id`,
  // A chained commit's events are the event_count positions ending at its event_pos (ledger).
  eventsAt: "SELECT id FROM events WHERE pos > :from AND pos <= :to AND commit_id = :commitId ORDER BY pos",
  // Without event_pos (a commit from before the ledger, or one whose events were found apart): a scan.
  eventsOf: "SELECT id FROM events WHERE commit_id = :commitId ORDER BY pos",
  // A version where it lives: the current one in records, earlier ones in record_versions.
  version: `SELECT deleted, data_digest AS dataDigest FROM records
      WHERE collection = :collection AND id = :id AND version = :version
    UNION ALL
    SELECT deleted, data_digest FROM record_versions WHERE collection = :collection AND id = :id AND version = :version`,
  previousDeleted: `SELECT deleted FROM record_versions WHERE collection = :collection AND id = :id AND version = :version`,
  createdAt: "SELECT created_at AS createdAt FROM records WHERE collection = :collection AND id = :id",
  storedResponse: "SELECT response FROM idempotency_keys WHERE commit_id = :commitId",
  deliveries: "SELECT id, endpoint_id AS endpointId FROM deliveries WHERE event_id = :eventId ORDER BY id",
};

export interface StoredEvent {
  type: string;
  aggregate: string;
  payload: string;
  deliverAfter: number | null;
  sequence: number;
  deliverBy: number;
  commitId: string;
  payloadDigest: string | null;
  /** The committing token, or null when its commit row is gone (then no retry can match). */
  tokenId: string | null;
}

/**
 * The answer to a commit that retries an earlier one by its event ids, or undefined when none of
 * its event ids is stored (a new commit). Throws 409 `event-id-taken` for any other reuse.
 */
export function* eventIdReplay(input: CommitInput): Op<CommitOutcome | undefined> {
  const stored: (StoredEvent | undefined)[] = [];
  let first = -1;
  for (let i = 0; i < input.events.length; i++) {
    const id = (input.events[i] as EventWrite).id;
    const existing = id === undefined ? undefined : yield* get<StoredEvent>(EVENT_SQL.findEvent, { id });
    stored.push(existing);
    if (existing && first < 0) first = i;
  }
  if (first < 0) return undefined;
  const taken = () =>
    problems.conflict("event-id-taken", "an event id in this commit is already taken", {
      errors: [{ pointer: `/events/${first}/id`, detail: "is already taken by another event" }],
    });
  const owner = input.eventIdOwner ?? input.by?.tokenId;
  const commitId = (stored[first] as StoredEvent).commitId;
  // The token first: another token's reuse is refused before anything about the content is looked at.
  for (let i = 0; i < input.events.length; i++) {
    const existing = stored[i];
    if (!existing || existing.tokenId !== owner) throw taken();
  }
  for (let i = 0; i < input.events.length; i++) {
    const existing = stored[i] as StoredEvent;
    if (existing.commitId !== commitId || !sameContent(existing, input.events[i] as EventWrite))
      throw taken();
  }
  const commit = yield* get<{
    at: number;
    recordKeys: string | null;
    eventPos: number | null;
    eventCount: number | null;
  }>(SQL.commit, { id: commitId });
  if (!commit) throw taken();
  // The first commit's events, all of them (the retry may name some), in its order.
  const eventIds =
    commit.eventPos === null || commit.eventCount === null
      ? yield* all<{ id: string }>(SQL.eventsOf, { commitId })
      : yield* all<{ id: string }>(SQL.eventsAt, {
          from: commit.eventPos - commit.eventCount,
          to: commit.eventPos,
          commitId,
        });
  const records = yield* sameRecords(input, commit.recordKeys);
  if (!records) throw taken();

  const response = yield* get<{ response: string }>(SQL.storedResponse, { commitId });
  if (response) {
    const answer = JSON.parse(response.response) as Pick<CommitOutcome, "result" | "written">;
    return { replayed: true, ...answer, deliveries: 0, deferredDeliveries: 0 };
  }
  return { replayed: true, ...(yield* rebuilt(eventIds, commit.at, commitId, records)) };
}

/**
 * The versions the first commit wrote for the request's records, in request order, when the
 * records equal the first commit's: the same (collection, id)s, each the same delete or data (by
 * its digest, so an erased version still compares), and an expectedVersion, if given, the one
 * the first commit met. undefined otherwise.
 */
function* sameRecords(
  input: CommitInput,
  recordKeys: string | null,
): Op<{ collection: string; id: string; version: number; deleted: boolean }[] | undefined> {
  const keys = JSON.parse(recordKeys ?? "[]") as [string, string, number][];
  if (keys.length !== input.records.length) return undefined;
  const versions = new Map(keys.map(([collection, id, version]) => [`${collection}\u0000${id}`, version]));
  const records: { collection: string; id: string; version: number; deleted: boolean }[] = [];
  for (const write of input.records) {
    const version = versions.get(`${write.collection}\u0000${write.id}`);
    if (version === undefined) return undefined;
    versions.delete(`${write.collection}\u0000${write.id}`);
    if (write.expectedVersion !== undefined && write.expectedVersion !== version - 1) return undefined;
    const row = yield* get<{ deleted: number; dataDigest: string | null }>(SQL.version, {
      collection: write.collection,
      id: write.id,
      version,
    });
    if (!row) return undefined;
    const deleted = write.data === null;
    if ((row.deleted === 1) !== deleted) return undefined;
    const digest = write.dataDigest !== undefined ? write.dataDigest : dataDigest(write.data);
    if (!deleted && digest !== row.dataDigest) return undefined;
    records.push({ collection: write.collection, id: write.id, version, deleted });
  }
  return records;
}

/** The first commit's answer, from the ledger (its versions and events) and the deliveries now. */
function* rebuilt(
  eventIds: { id: string }[],
  at: number,
  commitId: string,
  records: CommitResult["records"],
): Op<{ result: CommitResult; written: WrittenRecord[]; deliveries: 0; deferredDeliveries: 0 }> {
  const written: WrittenRecord[] = [];
  for (const record of records) {
    const previous =
      record.version === 1
        ? undefined
        : yield* get<{ deleted: number }>(SQL.previousDeleted, {
            collection: record.collection,
            id: record.id,
            version: record.version - 1,
          });
    const created = record.version === 1 || previous?.deleted === 1;
    const current = created
      ? undefined
      : yield* get<{ createdAt: number }>(SQL.createdAt, { collection: record.collection, id: record.id });
    written.push({
      created,
      createdAt: created ? at : Math.min(current?.createdAt ?? at, at),
      updatedAt: at,
    });
  }
  const events: CommitResult["events"] = [];
  for (const { id } of eventIds) {
    const event = yield* get<StoredEvent>(EVENT_SQL.findEvent, { id });
    if (!event) throw new Error(`event ${id} vanished inside the transaction`);
    const deliveries = [
      ...(yield* all<{ id: string; endpointId: string }>(SQL.deliveries, { eventId: id })),
      ...(yield* unexpandedDeliveries(id)),
    ].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    events.push({
      id,
      type: event.type,
      aggregate: event.aggregate,
      sequence: event.sequence,
      deliverBy: iso(event.deliverBy),
      deliveries,
    });
  }
  return { result: { commitId, records, events }, written, deliveries: 0, deferredDeliveries: 0 };
}

/**
 * Whether a client-chosen event id is being reused for the same event. Payloads compare as
 * canonical JSON (by the ledger's digest when it has one, so an erased payload still compares):
 * a retry whose serializer orders keys differently sends the same content.
 */
function sameContent(stored: StoredEvent, event: EventWrite): boolean {
  if (stored.type !== event.type || stored.aggregate !== event.aggregate) return false;
  if (stored.deliverAfter !== event.deliverAfter) return false;
  if (stored.payloadDigest !== null) {
    const digest = event.payloadDigest !== undefined ? event.payloadDigest : payloadDigest(event.payload);
    if (digest !== null) return digest === stored.payloadDigest;
  }
  return canonicalJson(JSON.parse(stored.payload)) === canonicalJson(JSON.parse(event.payload));
}
