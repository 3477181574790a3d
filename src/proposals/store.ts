// The proposals table (DESIGN §10): one statement per thing that can happen to a proposal. Every
// decision is conditional on the proposal still being pending, so two people deciding at once
// cannot both win, and an approval that lost the race rolls back the commit it was part of.
import { all, get, type Op, run } from "../db/op.ts";
import { iso } from "../lib/time.ts";

export const STATUSES = ["pending", "approved", "rejected", "conflicted", "expired"] as const;
export type ProposalStatus = (typeof STATUSES)[number];

export interface ProposalRow {
  id: string;
  status: ProposalStatus;
  summary: string;
  commit: string;
  proposedByTokenId: string;
  proposedByTokenName: string;
  idempotencyKey: string | null;
  requestHash: string | null;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  decidedByTokenId: string | null;
  decidedByTokenName: string | null;
  reason: string | null;
  result: string | null;
  commitId: string | null;
}

export interface Actor {
  tokenId: string;
  tokenName: string;
}

const COLUMNS = `id, status, summary, "commit", proposed_by_token_id AS proposedByTokenId,
  proposed_by_token_name AS proposedByTokenName, idempotency_key AS idempotencyKey, request_hash AS requestHash,
  created_at AS createdAt, expires_at AS expiresAt, decided_at AS decidedAt, decided_by_token_id AS decidedByTokenId,
  decided_by_token_name AS decidedByTokenName, reason, result, commit_id AS commitId`;

/** The proposal as the API answers it; lists leave out `commit`. */
export function proposalView(row: ProposalRow, withCommit = true) {
  return {
    id: row.id,
    status: row.status,
    summary: row.summary,
    ...(withCommit ? { commit: JSON.parse(row.commit) as unknown } : {}),
    proposedBy: { tokenId: row.proposedByTokenId, tokenName: row.proposedByTokenName },
    createdAt: iso(row.createdAt),
    expiresAt: iso(row.expiresAt),
    decidedAt: iso(row.decidedAt),
    decidedBy:
      row.decidedByTokenId === null
        ? null
        : { tokenId: row.decidedByTokenId, tokenName: row.decidedByTokenName ?? "" },
    reason: row.reason,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
  };
}
export type ProposalView = ReturnType<typeof proposalView>;

export function* getProposal(id: string): Op<ProposalRow | undefined> {
  return yield* get<ProposalRow>(`SELECT ${COLUMNS} FROM proposals WHERE id = :id`, { id });
}

export function* findByIdempotencyKey(tokenId: string, key: string): Op<ProposalRow | undefined> {
  return yield* get<ProposalRow>(
    `SELECT ${COLUMNS} FROM proposals WHERE proposed_by_token_id = :tokenId AND idempotency_key = :key`,
    { tokenId, key },
  );
}

/** Frees an idempotency key older than its lifetime for reuse; the proposal itself stays. */
export function* releaseIdempotencyKey(tokenId: string, key: string): Op<void> {
  yield* run(
    "UPDATE proposals SET idempotency_key = NULL, request_hash = NULL WHERE proposed_by_token_id = :tokenId AND idempotency_key = :key",
    { tokenId, key },
  );
}

export function* insertProposal(row: ProposalRow): Op<void> {
  yield* run(
    `INSERT INTO proposals (id, status, summary, "commit", proposed_by_token_id, proposed_by_token_name,
       idempotency_key, request_hash, created_at, expires_at)
     VALUES (:id, 'pending', :summary, :commit, :proposedByTokenId, :proposedByTokenName, :idempotencyKey,
       :requestHash, :createdAt, :expiresAt)`,
    {
      id: row.id,
      summary: row.summary,
      commit: row.commit,
      proposedByTokenId: row.proposedByTokenId,
      proposedByTokenName: row.proposedByTokenName,
      idempotencyKey: row.idempotencyKey,
      requestHash: row.requestHash,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
    },
  );
}

/** Newest first; `after` = the last id seen. */
export function* listProposals(
  status: ProposalStatus | undefined,
  limit: number,
  after: string | undefined,
): Op<ProposalRow[]> {
  return yield* all<ProposalRow>(
    `SELECT ${COLUMNS} FROM proposals WHERE (:status IS NULL OR status = :status) AND (:after IS NULL OR id < :after)
       ORDER BY id DESC LIMIT :limit`,
    { status: status ?? null, after: after ?? null, limit },
  );
}

/**
 * Moves a pending proposal to its decision; false when it was no longer pending (someone else
 * decided first, or it expired). `unexpired`: only if it has not expired by `now` either (an
 * approval, re-checked in its own transaction).
 */
export function* decide(
  id: string,
  decision: { status: Exclude<ProposalStatus, "pending">; by: Actor | null; reason: string | null },
  now: number,
  result: { json: string | null; commitId: string | null } = { json: null, commitId: null },
  unexpired = false,
): Op<boolean> {
  const changed = yield* run(
    `UPDATE proposals SET status = :status, decided_at = :now, decided_by_token_id = :byId,
       decided_by_token_name = :byName, reason = :reason, result = :result, commit_id = :commitId
     WHERE id = :id AND status = 'pending' AND (:unexpired = 0 OR expires_at > :now)`,
    {
      unexpired: unexpired ? 1 : 0,
      id,
      status: decision.status,
      now,
      byId: decision.by?.tokenId ?? null,
      byName: decision.by?.tokenName ?? null,
      reason: decision.reason,
      result: result.json,
      commitId: result.commitId,
    },
  );
  return changed > 0;
}

/**
 * Rejects every pending proposal the token `proposerId` made (its token is being revoked, in the
 * same transaction): reason `proposer-revoked`, decided by `by` (the revoking token; null from
 * the command line). Returns how many.
 */
export function* rejectProposalsOf(proposerId: string, by: Actor | null, now: number): Op<number> {
  return yield* run(
    `UPDATE proposals SET status = 'rejected', decided_at = :now, decided_by_token_id = :byId,
       decided_by_token_name = :byName, reason = 'proposer-revoked'
     WHERE proposed_by_token_id = :proposerId AND status = 'pending'`,
    { proposerId, now, byId: by?.tokenId ?? null, byName: by?.tokenName ?? null },
  );
}

/** Whether any pending proposal is past expiresAt: a read, so an idle sweep writes nothing. */
export function* hasExpiredProposals(now: number): Op<boolean> {
  const row = yield* get<{ found: number }>(
    "SELECT 1 AS found FROM proposals WHERE status = 'pending' AND expires_at <= :now LIMIT 1",
    { now },
  );
  return row !== undefined;
}

/** Pending proposals past expiresAt become expired (at most `limit` per call); returns how many. */
export function* expireProposals(now: number, limit = 1000): Op<number> {
  return yield* run(
    `UPDATE proposals SET status = 'expired', decided_at = expires_at
     WHERE id IN (SELECT id FROM proposals WHERE status = 'pending' AND expires_at <= :now LIMIT :limit)`,
    { now, limit },
  );
}

/**
 * Deletes proposals that were not approved and were decided before `before` (rejected,
 * conflicted, expired). Approved ones stay: they belong to their commit's record.
 */
export function* pruneProposals(before: number, limit = 1000): Op<number> {
  return yield* run(
    `DELETE FROM proposals WHERE id IN (SELECT id FROM proposals
       WHERE status IN ('rejected', 'conflicted', 'expired') AND decided_at < :before LIMIT :limit)`,
    { before, limit },
  );
}

export function* countByStatus(): Op<Record<ProposalStatus, number>> {
  const rows = yield* all<{ status: ProposalStatus; n: number }>(
    "SELECT status, count(*) AS n FROM proposals GROUP BY status",
  );
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ProposalStatus, number>;
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

/** Each record's state now, for the diff: version 0 and data null if it never existed. */
export function* currentRecords(
  keys: readonly { collection: string; id: string }[],
): Op<{ collection: string; id: string; version: number; data: unknown; deleted: boolean }[]> {
  const current = [];
  for (const { collection, id } of keys) {
    const row = yield* get<{ version: number; data: string; deleted: number }>(
      "SELECT version, data, deleted FROM records WHERE collection = :collection AND id = :id",
      { collection, id },
    );
    current.push({
      collection,
      id,
      version: row?.version ?? 0,
      data: row && row.deleted === 0 ? (JSON.parse(row.data) as unknown) : null,
      deleted: row?.deleted === 1,
    });
  }
  return current;
}

/** Which of these endpoint ids exist (a proposal's events may name endpoints). */
export function* existingEndpoints(ids: readonly string[]): Op<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = yield* all<{ id: string }>("SELECT id FROM endpoints");
  return new Set(rows.map((r) => r.id).filter((id) => ids.includes(id)));
}
