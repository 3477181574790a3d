// Transitions out of in flight, after an attempt: → delivered (2xx), → pending again (retry, or
// 410 Gone, whose endpoint the caller disables: CompletedBatch.gone), → dead (failed at or after the deadline).
// Invariants kept here:
//   - fenced: a row changes only while the caller still holds the lease of the claim that sent
//     it (lease_owner), so a dispatcher whose lease was taken over cannot overwrite a newer
//     result; its attempt is still logged;
//   - a row that leaves pending promotes its queue's next head (heads.ts);
//   - every delivered row is counted in its minute bucket, every deadline death in the
//     counter (counters.ts), in the same transaction.
import { all, exec, type Op, run } from "../db/op.ts";
import type { ClaimedDelivery } from "./claim.ts";
import { bumpDeadlineCounter, recordDelivered, recordDeliveredMany } from "./counters.ts";
import { DEAD_LETTER_SET } from "./dead-letter.ts";
import {
  type PromotedHead,
  type PromotionLease,
  promoteAndLease,
  promoteHeads,
  promoteQueues,
  type QueuePosition,
} from "./heads.ts";
import { chunks, MAX_ROWS, type RowsKind, rowsStatement } from "./rows.ts";

export interface AttemptRecord {
  deliveryId: string;
  owner: string;
  endpointId: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responsePrefix: string | null;
  /**
   * Where the row is, when the sender knows it (the dispatcher: from its claim): its rowid, so the
   * fence and the UPDATE find it without a lookup of the id index (its id is checked too: a
   * VACUUM may renumber rowids), and its queue and sequence, so promoting its successor needs no
   * lookup of it either (heads.ts promoteQueues).
   */
  sent?: { rid: number | undefined; aggregate: string; sequence: number } | undefined;
}

export type Completion =
  /** latencyMs: from the moment it became due (commit, deliverAfter or replay) to the 2xx. */
  | { kind: "delivered"; at: number; latencyMs: number }
  | { kind: "retry"; at: number; nextAttemptAt: number }
  | { kind: "dead"; at: number; reason: "deadline_exceeded" }
  /** 410 Gone: the endpoint is disabled; the delivery waits for re-enable or its deadline. */
  | { kind: "gone"; at: number };

/** Endpoint health is written at most once a second per endpoint and outcome (a hot row). */
const HEALTH_RESOLUTION_MS = 1_000;

const RESULT = "last_status_code = :code, last_error = :error";
const RELEASE = `lease_owner = NULL, lease_expires_at = NULL, ${RESULT}`;
const FENCE = "WHERE id = :id AND lease_owner = :owner AND status = 'pending'";

/**
 * Records an attempt and its outcome. Returns false when the fence refused it (the attempt is
 * still logged).
 */
export function* completeDelivery(attempt: AttemptRecord, completion: Completion): Op<boolean> {
  yield* logAttempt(attempt);
  const changed = yield* applyCompletion(attempt, completion);
  if (!changed) return false;
  if (completion.kind === "delivered" || completion.kind === "dead") {
    // It left pending: the next of its queue becomes the head.
    yield* promoteHeads([attempt.deliveryId]);
  }
  yield* touchEndpointHealth(attempt.endpointId, completion);
  return true;
}

export interface CompletionItem {
  attempt: AttemptRecord;
  completion: Completion;
}

export interface CompletedBatch {
  /** Per item, whether the fence let it through. */
  recorded: boolean[];
  /** The deliveries that became heads of their queues (their predecessors left pending). */
  promoted: PromotedHead[];
  /** Those of them the promotion leased (with `lease`): as a claim returns them. */
  leased: ClaimedDelivery[];
  /**
   * Endpoints a recorded 410 Gone answered for, with the time: the caller disables them (and
   * commits the system event of DESIGN §19) in this transaction.
   */
  gone: { endpointId: string; at: number }[];
}

/**
 * Records a batch of attempts and their outcomes, as completeDelivery does for each, with
 * set-based statements: one INSERT for the attempt log, one fenced UPDATE for every delivered
 * row, one head promotion for their queues, the minute buckets and endpoint health once per
 * key. Other outcomes (retries, 410, dead) are rare and go one by one. With `lease` (a local
 * file), the promotion of the queues the sender names also leases the heads it makes that a
 * claim could take now (heads.ts promoteAndLease).
 */
export function* completeDeliveries(
  items: CompletionItem[],
  lease: PromotionLease | null = null,
): Op<CompletedBatch> {
  if (items.length === 0) return { recorded: [], promoted: [], leased: [], gone: [] };
  const recorded = items.map(() => false);
  const delivered: number[] = [];
  const gone: CompletedBatch["gone"] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as CompletionItem;
    if (item.completion.kind === "delivered") delivered.push(i);
    else if (yield* applyCompletion(item.attempt, item.completion)) {
      recorded[i] = true;
      if (item.completion.kind === "gone")
        gone.push({ endpointId: item.attempt.endpointId, at: item.completion.at });
    }
  }
  // The delivered rows the fence lets through, with the position (1-based) of their attempts.
  const rows: [rid: number, owner: string, at: number, code: number | null, k: number][] = [];
  const counted: { endpointId: string; at: number; latencyMs: number }[] = [];
  if (delivered.length > 0) {
    // The fence, read first (inside this transaction; on the remote write path a guarded read, so
    // the group runs again if a lease changes before its write): a row changes only while it is
    // pending and leased to the claim that sent it. Reading rather than UPDATE … RETURNING keeps
    // every write of the batch free to follow. Rows whose rowid the sender knows are read by it.
    const rids: number[] = [];
    const ids: string[] = [];
    for (const i of delivered) {
      const { attempt } = items[i] as CompletionItem;
      if (attempt.sent?.rid !== undefined) rids.push(attempt.sent.rid);
      else ids.push(attempt.deliveryId);
    }
    type Lease = { rid: number; id: string; owner: string | null; status: string };
    const leasesBy = (column: "rowid" | "id", keys: unknown[]) =>
      all<Lease>(
        `SELECT rowid AS rid, id, lease_owner AS owner, status FROM deliveries
         WHERE ${column} IN (SELECT value FROM json_each(:keys))`,
        { keys: JSON.stringify(keys) },
      );
    const leases = [
      ...(rids.length === 0 ? [] : yield* leasesBy("rowid", rids)),
      ...(ids.length === 0 ? [] : yield* leasesBy("id", ids)),
    ];
    const fences = new Map(leases.filter((l) => l.status === "pending").map((l) => [l.id, l]));
    for (const i of delivered) {
      const { attempt, completion } = items[i] as CompletionItem;
      const fence = fences.get(attempt.deliveryId);
      if (completion.kind !== "delivered" || fence?.owner !== attempt.owner) continue;
      // One winner per row, should a batch hold the same delivery twice.
      fences.delete(attempt.deliveryId);
      recorded[i] = true;
      rows.push([fence.rid, attempt.owner, completion.at, attempt.statusCode, i + 1]);
      counted.push({ endpointId: attempt.endpointId, at: completion.at, latencyMs: completion.latencyMs });
    }
  }
  // The attempt log, at positions of its own after the last (so the delivered rows below can name
  // theirs: max(pos) then is the last of them). The success of a delivered row is marked
  // on_delivery and stays out of attempts_delivery: its row points at it (delivered_attempt).
  // Rows as a VALUES list bound by position (rows.ts), only the columns written; in lists of at
  // most MAX_ROWS, each after the one before (k counts from its list's first row).
  const onDelivery = new Set(rows.map((row) => row[4] - 1));
  const attempts = items.map(({ attempt: a }, i) => [
    i % MAX_ROWS,
    a.deliveryId,
    a.startedAt,
    a.durationMs,
    a.statusCode,
    a.error,
    a.responsePrefix,
    onDelivery.has(i) ? 1 : null,
  ]);
  for (const list of chunks(attempts))
    yield rowsStatement("a", ATTEMPT_COLUMNS, list, INSERT_ATTEMPTS, {}, BLIND);
  if (rows.length > 0) {
    for (const list of chunks(rows))
      yield rowsStatement("b", DELIVERED_COLUMNS, list, SET_DELIVERED, { attempts: items.length }, BLIND);
    yield* recordDeliveredMany(counted);
  }
  // Rows that left pending promote their queues' next heads, once per queue: from where the
  // sender says they were, or else looked up by id.
  const positions: QueuePosition[] = [];
  const leftIds: string[] = [];
  items.forEach(({ attempt, completion }, i) => {
    if (!recorded[i] || (completion.kind !== "delivered" && completion.kind !== "dead")) return;
    if (attempt.sent)
      positions.push({
        endpointId: attempt.endpointId,
        aggregate: attempt.sent.aggregate,
        sequence: attempt.sent.sequence,
      });
    else leftIds.push(attempt.deliveryId);
  });
  const promoted: PromotedHead[] = [];
  const leased: ClaimedDelivery[] = [];
  if (lease) {
    for (const head of yield* promoteAndLease(positions, lease)) {
      promoted.push(head);
      if (head.leased) leased.push(head);
    }
  } else promoted.push(...(yield* promoteQueues(positions)));
  promoted.push(...(yield* promoteHeads(leftIds)));
  // Endpoint health: the latest time per endpoint and column (successes, failures), keyed by the
  // endpoint alone (no key made per outcome).
  const successes = new Map<string, Completion>();
  const failures = new Map<string, Completion>();
  for (let i = 0; i < items.length; i++) {
    if (!recorded[i]) continue;
    const { attempt, completion } = items[i] as CompletionItem;
    const latest = completion.kind === "delivered" ? successes : failures;
    const seen = latest.get(attempt.endpointId);
    if (!seen || seen.at < completion.at) latest.set(attempt.endpointId, completion);
  }
  for (const latest of [successes, failures])
    for (const [endpointId, completion] of latest) yield* touchEndpointHealth(endpointId, completion);
  return { recorded, promoted, leased, gone };
}

const BLIND: RowsKind = { kind: "run", blind: true };

/** A batch's attempts (rows.ts): k is the row's place in its list, from 0. */
const ATTEMPT_COLUMNS = [
  "k",
  "delivery_id",
  "started_at",
  "duration_ms",
  "status_code",
  "error",
  "response_prefix",
  "on_delivery",
];
const INSERT_ATTEMPTS = `INSERT INTO attempts (pos, delivery_id, started_at, duration_ms, status_code, error, response_prefix, on_delivery)
  SELECT (SELECT coalesce(max(pos), 0) FROM attempts) + a.k + 1,
    a.delivery_id, a.started_at, a.duration_ms, a.status_code, a.error, a.response_prefix, a.on_delivery
  FROM a WHERE a.k IS NOT NULL`;

/**
 * A batch's delivered rows the fence let through (rows.ts): by rowid, still fenced, each naming
 * its attempt (k: its item's place in the batch, from 1; the batch's :attempts are the last rows
 * of the attempt log).
 */
const DELIVERED_COLUMNS = ["rid", "owner", "at", "code", "k"];
const SET_DELIVERED = `UPDATE deliveries SET status = 'delivered', delivered_at = b.at, lease_owner = NULL,
    lease_expires_at = NULL, last_status_code = b.code, last_error = NULL,
    delivered_attempt = (SELECT max(pos) FROM attempts) - :attempts + b.k
  FROM b
  WHERE deliveries.rowid = +b.rid AND deliveries.lease_owner = b.owner AND deliveries.status = 'pending'`;

function* logAttempt(attempt: AttemptRecord): Op<void> {
  yield* run(
    `INSERT INTO attempts (delivery_id, started_at, duration_ms, status_code, error, response_prefix)
     VALUES (:deliveryId, :startedAt, :durationMs, :statusCode, :error, :responsePrefix)`,
    {
      deliveryId: attempt.deliveryId,
      startedAt: attempt.startedAt,
      durationMs: attempt.durationMs,
      statusCode: attempt.statusCode,
      error: attempt.error,
      responsePrefix: attempt.responsePrefix,
    },
  );
}

/** The fenced UPDATE of the delivery and what it counts; whether the fence let it through. */
function* applyCompletion(attempt: AttemptRecord, completion: Completion): Op<boolean> {
  const fence = {
    id: attempt.deliveryId,
    owner: attempt.owner,
    code: attempt.statusCode,
    error: attempt.error,
  };
  switch (completion.kind) {
    case "delivered": {
      const changed = yield* run(
        `UPDATE deliveries SET status = 'delivered', delivered_at = :at, ${RELEASE} ${FENCE}`,
        { ...fence, at: completion.at },
      );
      if (changed > 0) yield* recordDelivered(attempt.endpointId, completion.at, completion.latencyMs);
      return changed > 0;
    }
    case "retry":
      return (
        (yield* run(`UPDATE deliveries SET next_attempt_at = :next, ${RELEASE} ${FENCE}`, {
          ...fence,
          next: completion.nextAttemptAt,
        })) > 0
      );
    case "gone": {
      const changed = yield* run(`UPDATE deliveries SET next_attempt_at = :at, ${RELEASE} ${FENCE}`, {
        ...fence,
        at: completion.at,
      });
      return changed > 0;
    }
    case "dead": {
      const changed = yield* run(`UPDATE deliveries SET ${DEAD_LETTER_SET}, ${RESULT} ${FENCE}`, {
        ...fence,
        at: completion.at,
        reason: completion.reason,
      });
      if (changed > 0) yield* bumpDeadlineCounter(changed);
      return changed > 0;
    }
  }
}

export function* touchEndpointHealth(endpointId: string, completion: Completion): Op<void> {
  // To the second: at thousands of deliveries a second, writing this one hot row every time
  // would cost more than it tells.
  const column = completion.kind === "delivered" ? "last_success_at" : "last_failure_at";
  yield* exec(
    `UPDATE endpoints SET ${column} = :at
     WHERE id = :endpointId AND (${column} IS NULL OR ${column} <= :at - :resolution)`,
    { endpointId, at: completion.at, resolution: HEALTH_RESOLUTION_MS },
  );
}
