// The write side's entry point: validates and normalises a commit, guards its idempotency key,
// queues it on the Writer, and tells the dispatcher when new deliveries exist.
import type { Database } from "../db/open.ts";
import { failpoint } from "../failpoints.ts";
import { canonicalJson, sha256Hex } from "../lib/canonical-json.ts";
import { invalidField, problems } from "../lib/problem.ts";
import type { Clock } from "../lib/time.ts";
import { type CommitOutcome, type Committer, commitOp, idempotentReplay } from "./commit-op.ts";
import { type CommitBody, type Limits, normalizeCommit } from "./normalize.ts";

export interface CommitRequest {
  /** Who commits; idempotency keys are scoped to by.tokenId. */
  by: Committer;
  body: CommitBody;
  /** The raw JSON value of the body, hashed for idempotency. */
  rawBody: unknown;
  idempotencyKey: string | undefined;
  traceparent: string | undefined;
  conflictStatus?: 409 | 412;
}

export interface CommitServiceDeps {
  db: Database;
  limits: Limits;
  clock: Clock;
  /** Called after a commit that created deliveries is durable (wakes the dispatcher). */
  onDeliveries?: (count: number) => void;
  /** Called once the commit is durable, before the response is sent (metrics). */
  afterCommit?: (durationMs: number) => void;
}

export class CommitService {
  readonly #deps: CommitServiceDeps;
  /** Idempotency keys whose first request is still running in this process. */
  readonly #inProgress = new Set<string>();

  constructor(deps: CommitServiceDeps) {
    this.#deps = deps;
  }

  async commit(request: CommitRequest): Promise<CommitOutcome> {
    const { db, limits, clock } = this.#deps;
    const started = performance.now();
    const now = clock();
    const idempotency = request.idempotencyKey === undefined ? undefined : checkKey(request);
    if (idempotency) {
      // A retry is answered from the stored response before the body is validated again: rules
      // that depend on the time (a deliverBy now in the past) must not turn a replay into a 422.
      // commitOp checks again inside the write transaction, which is what decides.
      const replay = await db.driver.read(idempotentReplay(request.by.tokenId, idempotency, now));
      if (replay) return replay;
    }
    const input = normalizeCommit(request.body, {
      by: request.by,
      now,
      limits,
      idempotency,
      traceparent: request.traceparent,
      conflictStatus: request.conflictStatus ?? 409,
    });
    const guard = idempotency ? `${request.by.tokenId}\u0000${idempotency.key}` : undefined;
    if (guard !== undefined) {
      if (this.#inProgress.has(guard)) {
        throw problems.conflict(
          "idempotency-in-progress",
          "a request with this Idempotency-Key is still being processed; retry shortly",
        );
      }
      this.#inProgress.add(guard);
    }
    let outcome: CommitOutcome;
    try {
      outcome = await db.writer.write(commitOp(input));
    } finally {
      if (guard !== undefined) this.#inProgress.delete(guard);
    }
    if (outcome.replayed) return outcome;
    failpoint("commit.after_commit");
    this.#deps.afterCommit?.(performance.now() - started);
    if (outcome.deliveries > 0) this.#deps.onDeliveries?.(outcome.deliveries);
    return outcome;
  }
}

function checkKey(request: CommitRequest): { key: string; requestHash: string } {
  const key = request.idempotencyKey ?? "";
  if (key.length === 0 || key.length > 255) {
    throw invalidField("header:Idempotency-Key", "must be 1-255 characters");
  }
  // The conflict mode is part of the request: a PUT and a commit with one key are different requests.
  const requestHash = sha256Hex(
    canonicalJson({ body: request.rawBody, mode: request.conflictStatus ?? 409 }),
  );
  return { key, requestHash };
}
