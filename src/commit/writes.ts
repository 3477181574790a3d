// The write side's named writes (db/writer-ops.ts): the commit, alone or with more work in its
// transaction, made from its normalised input.
import type { Op } from "../db/op.ts";
import { defineBorrowingWrite } from "../db/writer-ops.ts";
import type { HeadLeases } from "../deliveries/enqueue.ts";
import { type CommitInput, type CommitOutcome, type CommitResult, commitOp } from "./commit-op.ts";

/**
 * The head leases a commit borrows: the dispatcher's own, or on the writer thread the stand-in of a
 * budget it reserved (the dispatcher's loan, deliveries/lease-budget.ts); undefined where no
 * dispatcher runs. Each event has at most one delivery per endpoint.
 */
export function leasesOf(lent: unknown): HeadLeases | undefined {
  return lent as HeadLeases | undefined;
}

/** A commit (re-runnable: the remote write path may run it again). */
export const commitWrite = defineBorrowingWrite(
  "commit",
  (lent, input: CommitInput) => commitOp(input, leasesOf(lent)),
  { again: true, borrows: (input) => input.events.length },
);

/**
 * The commit, then more work in its transaction (rolled back with it if that throws), also when
 * the commit retries an earlier one by its event ids and answers that one's result (an approval
 * is then decided with it).
 */
export function* commitThen(
  commit: Op<CommitOutcome>,
  also: (result: CommitResult) => Op<void>,
): Op<CommitOutcome> {
  const outcome = yield* commit;
  yield* also(outcome.result);
  return outcome;
}
