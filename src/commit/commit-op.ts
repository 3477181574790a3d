// The commit: record writes, their events and the events' deliveries, all in the one write
// transaction the Writer gives this operation (DESIGN §1.1). Any throw rolls back everything
// this operation wrote, and only that (writer.ts: its savepoint, or its group's run again).

import { allBatchShared, exec, get, type Op, prefetch, run, type Statement } from "../db/op.ts";
import {
  deferFanOut,
  enqueueDelivery,
  FAN_OUT_PENDING,
  type HeadLeases,
  INLINE_DELIVERIES,
  newDeliveryId,
} from "../deliveries/enqueue.ts";
import { type CompiledFilter, type Condition, compileFilter } from "../endpoints/controls.ts";
import { matchesEventType } from "../endpoints/patterns.ts";
import { failpoint } from "../failpoints.ts";
import {
  appendCommit,
  dataDigest,
  type LedgerCommit,
  ledgerReads,
  payloadDigest,
  supersede,
} from "../ledger/append.ts";
import { IDEMPOTENCY_TTL_MS } from "../lib/idempotency.ts";
import { newId, uuidv7 } from "../lib/ids.ts";
import { problems } from "../lib/problem.ts";
import { iso } from "../lib/time.ts";
import { EVENT_SQL, eventIdReplay } from "./event-id-replay.ts";
import type {
  CommitInput,
  CommitOutcome,
  CommitResult,
  EventWrite,
  RecordWrite,
  WrittenRecord,
} from "./types.ts";

export type {
  CommitInput,
  CommitOutcome,
  CommitResult,
  Committer,
  EventWrite,
  RecordWrite,
  WrittenRecord,
} from "./types.ts";

const SQL = {
  // Live or expired (older than the TTL): an expired row is deleted before the key is stored again.
  findIdempotent: `SELECT request_hash AS requestHash, response, created_at AS createdAt FROM idempotency_keys
    WHERE token_id = :tokenId AND key = :key`,
  // Frees an expired key for reuse (the unique index would refuse a second row with it); the
  // commit row itself stays in the ledger.
  releaseExpiredKey: "DELETE FROM idempotency_keys WHERE token_id = :tokenId AND key = :key",
  getRecord:
    "SELECT version, deleted, created_at AS createdAt FROM records WHERE collection = :collection AND id = :id",
  // The current row is already known (read above, in this transaction): a plain INSERT or
  // UPDATE, not an upsert, which costs SQLite noticeably more.
  insertRecord: `INSERT INTO records (collection, id, version, data, deleted, created_at, updated_at, commit_id,
      data_digest)
    VALUES (:collection, :id, :version, :data, :deleted, :createdAt, :now, :commitId, :dataDigest)`,
  updateRecord: `UPDATE records SET version = :version, data = :data, deleted = :deleted, created_at = :createdAt,
      updated_at = :now, commit_id = :commitId, data_digest = :dataDigest WHERE collection = :collection AND id = :id`,
  endpoints: "SELECT id, event_types AS eventTypes, filter FROM endpoints",
  // Events are immutable and never deleted, so the aggregate's last sequence is the largest in
  // the (aggregate, sequence) index: one seek, no table of counters to write. Read with it:
  // whether an earlier fan-out of the aggregate still waits to be expanded (enqueue.ts).
  nextSequence: `SELECT coalesce(max(sequence), 0) + 1 AS sequence, ${FAN_OUT_PENDING} AS fanOutPending
    FROM events WHERE aggregate = :key`,
  insertEvent: `INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_after,
      deliver_by, commit_id, traceparent, payload_digest)
    VALUES (:id, :type, :aggregate, :sequence, :payload, :now, :deliverAfter, :deliverBy, :commitId, :traceparent,
      :payloadDigest)`,
  storeResponse: `INSERT INTO idempotency_keys (commit_id, token_id, key, request_hash, response, created_at)
    VALUES (:commitId, :tokenId, :key, :requestHash, :response, :now)`,
};

/**
 * The stored answer to an earlier request with this token and Idempotency-Key, if that key is
 * still live (younger than IDEMPOTENCY_TTL_MS); a 422 when the earlier request had another body.
 */
export function* idempotentReplay(
  tokenId: string,
  idempotency: { key: string; requestHash: string },
  now: number,
): Op<CommitOutcome | undefined> {
  return replayOf(yield* storedKey(tokenId, idempotency.key), idempotency, now);
}

interface StoredKey {
  requestHash: string;
  response: string;
  createdAt: number;
}

function storedKey(tokenId: string, key: string): Op<StoredKey | undefined> {
  return get<StoredKey>(SQL.findIdempotent, { tokenId, key });
}

/** The answer a stored key gives: none when absent or expired, a 422 when it was used with another body. */
function replayOf(
  previous: StoredKey | undefined,
  idempotency: { key: string; requestHash: string },
  now: number,
): CommitOutcome | undefined {
  if (!previous || previous.createdAt <= now - IDEMPOTENCY_TTL_MS) return undefined;
  if (previous.requestHash !== idempotency.requestHash) {
    throw problems.invalid([
      {
        pointer: "header:Idempotency-Key",
        detail: "this key was already used with a different request body",
      },
    ]);
  }
  const stored = JSON.parse(previous.response) as Pick<CommitOutcome, "result" | "written">;
  return { replayed: true, ...stored, deliveries: 0, deferredDeliveries: 0 };
}

/**
 * `leases`: this process's dispatcher: inline
 * deliveries that are heads are leased to it by their INSERT (enqueue.ts).
 */
export function* commitOp(input: CommitInput, leases?: HeadLeases): Op<CommitOutcome> {
  const { now } = input;
  if (input.announceReads !== false) yield* prefetch(commitReads(input));
  if (input.idempotency) {
    const stored = yield* storedKey(input.by?.tokenId ?? "", input.idempotency.key);
    const replay = replayOf(stored, input.idempotency, now);
    if (replay) return replay;
    // A row still holding the key is older than the TTL: the key is free for this request.
    if (stored)
      yield* exec(SQL.releaseExpiredKey, { tokenId: input.by?.tokenId ?? "", key: input.idempotency.key });
  }

  // A retry by event ids answers the first commit and writes nothing; any other reuse is 409.
  const retried = yield* eventIdReplay(input);
  if (retried) return retried;

  const commitId = newId("cmt", now);
  const records: CommitResult["records"] = [];
  const written: WrittenRecord[] = [];
  const ledger: LedgerCommit = {
    commitId,
    tokenId: input.by?.tokenId ?? null,
    tokenName: input.by?.tokenName ?? null,
    proposalId: input.by?.proposalId ?? null,
    at: now,
    records: [],
    events: [],
  };
  for (let i = 0; i < input.records.length; i++) {
    const write = input.records[i] as RecordWrite;
    const current = yield* get<{ version: number; deleted: number; createdAt: number }>(SQL.getRecord, {
      collection: write.collection,
      id: write.id,
    });
    checkExpectation(write, current, i, input.conflictStatus);
    const version = (current?.version ?? 0) + 1;
    const deleted = write.data === null;
    // Created now when new or re-created over a tombstone; a delete keeps the creation time.
    const created = !current || current.deleted === 1;
    const createdAt = !current || current.deleted === 1 ? now : current.createdAt;
    const digest = write.dataDigest !== undefined ? write.dataDigest : dataDigest(write.data);
    // The ledger keeps the version this one replaces (DESIGN §13).
    if (current) yield* supersede(write.collection, write.id);
    yield* run(current ? SQL.updateRecord : SQL.insertRecord, {
      collection: write.collection,
      id: write.id,
      version,
      data: write.data ?? "null",
      deleted: deleted ? 1 : 0,
      createdAt,
      now,
      commitId,
      dataDigest: digest,
    });
    records.push({ collection: write.collection, id: write.id, version, deleted });
    ledger.records.push({ collection: write.collection, id: write.id, version, deleted, dataDigest: digest });
    written.push({ created, createdAt, updatedAt: now });
  }

  failpoint("commit.after_records");

  const endpointRows =
    input.events.length > 0 ? yield* allBatchShared<EndpointTargetRow>("endpoints", SQL.endpoints) : [];
  const endpoints = parsedEndpoints(endpointRows);
  const targetsOf = (event: EventWrite, i: number): string[] =>
    event.endpoints
      ? event.endpoints.map((endpointId, j) => {
          if (!endpoints.some((e) => e.id === endpointId)) {
            throw problems.invalid([
              { pointer: `/events/${i}/endpoints/${j}`, detail: "is not the id of an endpoint" },
            ]);
          }
          return endpointId;
        })
      : endpoints
          .filter((e) => e.id !== event.excludeEndpoint && matchesEventType(e.patterns, event.type))
          .map((e) => e.id);
  // Type-based targets before filters (which need the event's id and sequence, known below): the
  // count an unfiltered commit is refused by up front; with filters, the exact count is checked
  // after the loop (a throw rolls the whole commit back).
  const fanOut = input.events.map(targetsOf);
  const filterOf = new Map(endpoints.filter((e) => e.filter !== null).map((e) => [e.id, e.filter]));
  const filtered = (event: EventWrite, i: number) =>
    event.endpoints === undefined && fanOut[i]?.some((id) => filterOf.has(id));
  const mayShrink = filterOf.size > 0 && input.events.some(filtered);
  // A fan-out too large to insert now is written compactly and expanded after the commit
  // (enqueue.ts); so is every event of an aggregate with a fan-out still waiting.
  const deferAll =
    checkFanOut(fanOut, mayShrink ? Number.POSITIVE_INFINITY : input.maxDeliveries) > INLINE_DELIVERIES;
  const deferredAggregates = new Set<string>();
  let deferredDeliveries = 0;
  const events: CommitResult["events"] = [];
  // The last sequence given per aggregate in this commit: the next event of the same aggregate
  // follows it without reading again (the remote write path cannot see its own pending writes).
  const lastSequence = new Map<string, number>();
  let deliveryCount = 0;
  for (let i = 0; i < input.events.length; i++) {
    const event = input.events[i] as EventWrite;
    const id = event.id ?? uuidv7(now);
    const previous = lastSequence.get(event.aggregate);
    let sequence: number;
    if (previous !== undefined) sequence = previous + 1;
    else {
      const next = yield* get<{ sequence: number; fanOutPending: number }>(SQL.nextSequence, {
        key: event.aggregate,
      });
      sequence = next?.sequence ?? 1;
      if (deferAll || next?.fanOutPending) deferredAggregates.add(event.aggregate);
    }
    lastSequence.set(event.aggregate, sequence);
    const digest = event.payloadDigest !== undefined ? event.payloadDigest : payloadDigest(event.payload);
    yield* run(SQL.insertEvent, {
      id,
      type: event.type,
      aggregate: event.aggregate,
      sequence,
      payload: event.payload,
      now,
      deliverAfter: event.deliverAfter,
      deliverBy: event.deliverBy,
      commitId,
      traceparent: input.traceparent ?? null,
      payloadDigest: digest,
    });
    if (digest !== null) {
      ledger.events.push({
        id,
        type: event.type,
        aggregate: event.aggregate,
        sequence,
        payloadDigest: digest,
        deliverAfter: event.deliverAfter,
        deliverBy: event.deliverBy,
      });
    }
    let targets = fanOut[i] ?? [];
    if (mayShrink && filtered(event, i)) {
      // DESIGN §19: an endpoint's filter applies at type-based fan-out; explicit endpoints bypass it.
      const fields = {
        id,
        type: event.type,
        occurredAt: now,
        aggregate: event.aggregate,
        sequence,
        payload: event.payload,
      };
      const parsed = {};
      targets = targets.filter((endpointId) => filterOf.get(endpointId)?.(fields, parsed) ?? true);
    }
    const delivery = {
      eventId: id,
      aggregate: event.aggregate,
      sequence,
      type: event.type,
      availableAt: Math.max(now, event.deliverAfter ?? now),
      deliverBy: event.deliverBy,
      now,
      payload: event.payload,
      traceparent: input.traceparent ?? null,
    };
    const deliveries = targets.map((endpointId) => ({ id: newDeliveryId(now), endpointId }));
    if (deliveries.length > 0 && deferredAggregates.has(event.aggregate)) {
      yield* deferFanOut({ ...delivery, targets: deliveries });
      deferredDeliveries += deliveries.length;
    } else {
      for (const { id: deliveryId, endpointId } of deliveries) {
        yield* enqueueDelivery({ ...delivery, endpointId }, deliveryId, leases);
      }
    }
    deliveryCount += deliveries.length;
    events.push(eventSummary(id, event, sequence, event.deliverBy, deliveries));
  }

  if (mayShrink) limitDeliveries(deliveryCount, input.maxDeliveries);
  const result: CommitResult = { commitId, records, events };
  if (input.idempotency) {
    yield* run(SQL.storeResponse, {
      commitId,
      tokenId: input.by?.tokenId ?? "",
      key: input.idempotency.key,
      requestHash: input.idempotency.requestHash,
      response: JSON.stringify({ result, written }),
      now,
    });
  }
  yield* appendCommit(ledger);
  return { replayed: false, result, written, deliveries: deliveryCount, deferredDeliveries };
}

/**
 * The whole fan-out is counted before anything is inserted: one commit that would write more
 * than `max` deliveries is refused (422), so no single transaction holds the writer long
 * enough to stall everyone else's commits (DESIGN §3 limits).
 */
function checkFanOut(targets: string[][], max: number): number {
  const total = targets.reduce((sum, list) => sum + list.length, 0);
  limitDeliveries(total, max);
  return total;
}

function limitDeliveries(total: number, max: number): void {
  if (total > max) {
    throw problems.invalid([
      {
        pointer: "/events",
        detail: `would create ${total} deliveries; the limit is ${max} (OUTBOXD_MAX_DELIVERIES_PER_COMMIT)`,
      },
    ]);
  }
}

/** The reads commitOp will make, announced together (op.ts `prefetch`). */
function commitReads(input: CommitInput): Statement[] {
  const reads: Statement[] = [];
  if (input.idempotency) {
    reads.push({
      sql: SQL.findIdempotent,
      args: { tokenId: input.by?.tokenId ?? "", key: input.idempotency.key },
      kind: "get",
    });
  }
  for (const write of input.records) {
    reads.push({ sql: SQL.getRecord, args: { collection: write.collection, id: write.id }, kind: "get" });
  }
  if (input.events.length > 0)
    reads.push({ sql: SQL.endpoints, args: {}, kind: "all", batchShared: { table: "endpoints" } });
  for (const event of input.events) {
    if (event.id !== undefined) reads.push({ sql: EVENT_SQL.findEvent, args: { id: event.id }, kind: "get" });
  }
  const aggregates =
    input.events.length === 1
      ? [(input.events[0] as EventWrite).aggregate]
      : new Set(input.events.map((event) => event.aggregate));
  for (const aggregate of aggregates) {
    reads.push({ sql: SQL.nextSequence, args: { key: aggregate }, kind: "get" });
  }
  for (const read of ledgerReads()) reads.push(read);
  return reads;
}

function checkExpectation(
  write: RecordWrite,
  current: { version: number; deleted: number } | undefined,
  index: number,
  status: 409 | 412,
): void {
  const currentVersion = current?.version ?? null;
  const fail = (detail: string) => {
    if (status === 412) throw problems.preconditionFailed(detail, currentVersion);
    throw problems.versionConflict(detail, currentVersion, `/records/${index}/expectedVersion`);
  };
  const name = `${write.collection}/${write.id}`;
  if (write.expectedVersion === 0 && current) fail(`${name} already exists (version ${current.version})`);
  if (
    write.expectedVersion !== undefined &&
    write.expectedVersion !== 0 &&
    write.expectedVersion !== currentVersion
  ) {
    fail(`${name} is at version ${currentVersion ?? "none (never existed)"}, not ${write.expectedVersion}`);
  }
  if (write.data === null && (!current || current.deleted === 1)) {
    fail(`${name} cannot be deleted: it ${current ? "is already deleted" : "does not exist"}`);
  }
}

function eventSummary(
  id: string,
  event: EventWrite,
  sequence: number,
  deliverBy: number,
  deliveries: { id: string; endpointId: string }[],
): CommitResult["events"][number] {
  return {
    id,
    type: event.type,
    aggregate: event.aggregate,
    sequence,
    deliverBy: iso(deliverBy),
    deliveries,
  };
}

interface EndpointTargetRow {
  id: string;
  eventTypes: string;
  /** JSON text of the endpoint's filter (DESIGN §19), or null. */
  filter: string | null;
}

interface EndpointPatterns {
  id: string;
  patterns: string[];
  filter: CompiledFilter | null;
}

/**
 * The endpoints' patterns, parsed once per read: the rows of the endpoints read are one array
 * shared by every commit of a group (writer.ts batchShared), so its commits parse them once.
 */
const parsedByRows = new WeakMap<object, EndpointPatterns[]>();

function parsedEndpoints(rows: EndpointTargetRow[]): EndpointPatterns[] {
  let parsed = parsedByRows.get(rows);
  if (!parsed) {
    parsed = rows.map((e) => ({
      id: e.id,
      patterns: JSON.parse(e.eventTypes) as string[],
      filter: e.filter === null ? null : compileFilter(JSON.parse(e.filter) as Condition[]),
    }));
    parsedByRows.set(rows, parsed);
  }
  return parsed;
}
