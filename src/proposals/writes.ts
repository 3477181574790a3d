// The proposals' named writes (db/writer-ops.ts), including the approval: the proposed commit and
// the proposal marked approved in one transaction.
import type { CommitInput } from "../commit/commit-op.ts";
import { commitOp } from "../commit/commit-op.ts";
import { commitThen, leasesOf } from "../commit/writes.ts";
import type { Op } from "../db/op.ts";
import { defineBorrowingWrite, defineWrite } from "../db/writer-ops.ts";
import { IDEMPOTENCY_TTL_MS } from "../lib/idempotency.ts";
import { invalidField, type Problem, problems } from "../lib/problem.ts";
import {
  type Actor,
  decide,
  expireProposals,
  findByIdempotencyKey,
  getProposal,
  insertProposal,
  type ProposalRow,
  pruneProposals,
  releaseIdempotencyKey,
} from "./store.ts";

export function notPending(id: string, why: string): Problem {
  return problems.conflict(
    "proposal-not-pending",
    `proposal ${id} ${why}; only a pending proposal can be decided`,
  );
}

/** The proposal an earlier request with this Idempotency-Key stored, if it is still within its TTL. */
export function* proposalReplay(
  tokenId: string,
  idempotency: { key: string; requestHash: string },
  now: number,
): Op<ProposalRow | undefined> {
  const previous = yield* findByIdempotencyKey(tokenId, idempotency.key);
  if (!previous || previous.createdAt <= now - IDEMPOTENCY_TTL_MS) return undefined;
  if (previous.requestHash !== idempotency.requestHash) {
    throw invalidField("header:Idempotency-Key", "this key was already used with a different request body");
  }
  return previous;
}

/** Stores a proposal, unless a request with its Idempotency-Key stored one first (decided again inside the write). */
function* storeProposal(
  row: ProposalRow,
  idempotency: { key: string; requestHash: string } | undefined,
  now: number,
): Op<{ row: ProposalRow; replayed: boolean }> {
  if (idempotency) {
    const replay = yield* proposalReplay(row.proposedByTokenId, idempotency, now);
    if (replay) return { row: replay, replayed: true };
    yield* releaseIdempotencyKey(row.proposedByTokenId, idempotency.key);
  }
  yield* insertProposal(row);
  return { row, replayed: false };
}

/** An approval: who approved, why and when. */
export interface Approval {
  proposalId: string;
  by: Actor;
  reason: string | null;
  at: number;
}

export const storeProposalWrite = defineWrite("proposals.store", storeProposal, { again: false });
export const decideProposalWrite = defineWrite("proposals.decide", decide, { again: false });
export const expireProposalsWrite = defineWrite("proposals.expire", expireProposals, { again: false });
export const pruneProposalsWrite = defineWrite("proposals.prune", pruneProposals, { again: false });

/** The proposed commit, and the proposal marked approved in its transaction (re-runnable, as a commit). */
export const commitApprovingWrite = defineBorrowingWrite(
  "proposals.commitApproving",
  (lent, input: CommitInput, approval: Approval) =>
    commitThen(commitOp(input, leasesOf(lent)), function* (result) {
      const { proposalId, by, reason, at } = approval;
      // Still pending and not expired at the approval's time, checked in this transaction: an
      // approval that passed the service's check just before expiresAt cannot commit after it.
      const decided = yield* decide(
        proposalId,
        { status: "approved", by, reason },
        at,
        { json: JSON.stringify(result), commitId: result.commitId },
        true,
      );
      if (!decided) {
        const row = yield* getProposal(proposalId);
        throw notPending(
          proposalId,
          row?.status === "pending" ? "expired" : "was decided by someone else meanwhile",
        );
      }
    }),
  { again: true, borrows: (input) => input.events.length },
);
