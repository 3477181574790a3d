// The write side's entry point: validates and normalises a commit, guards its idempotency key,
// queues it on the Writer, and tells the dispatcher when new deliveries exist.

import type { Database } from "../db/open.ts";
import type { NamedWrite } from "../db/writer-ops.ts";
import type { EventTypeCatalog } from "../event-types/catalog.ts";
import { failpoint } from "../failpoints.ts";
import { canonicalJson, sha256Hex } from "../lib/canonical-json.ts";
import { checkIdempotencyKey } from "../lib/idempotency.ts";
import { Problem, problems } from "../lib/problem.ts";
import type { Clock } from "../lib/time.ts";
import type { TraceParent, Tracing } from "../ops/tracing.ts";
import { type CommitInput, type CommitOutcome, type Committer, idempotentReplay } from "./commit-op.ts";
import { type CommitBody, type Limits, normalizeCommit } from "./normalize.ts";
import { commitWrite } from "./writes.ts";

export interface CommitRequest {
  /** Who commits; idempotency keys are scoped to by.tokenId. */
  by: Committer;
  body: CommitBody;
  /** The raw JSON value of the body, hashed for idempotency. */
  rawBody: unknown;
  idempotencyKey: string | undefined;
  /** The caller's trace context (with tracing on, the request's server span). */
  traceparent: TraceParent | undefined;
  conflictStatus?: 409 | 412;
  /**
   * For an approved proposal (DESIGN §10; `by` is the approver, with the proposal id): the
   * proposer, whose event ids these are (DESIGN §3 `id`).
   */
  eventIdOwner?: string;
  /**
   * How the commit is written, when it is more than the commit alone (a proposal marked approved in
   * the same transaction: if that throws, the commit is rolled back with it). Default: commitWrite.
   */
  write?: (input: CommitInput) => NamedWrite<CommitOutcome>;
}

export interface CommitServiceDeps {
  db: Database;
  limits: Limits;
  clock: Clock;
  /**
   * Called after a commit that created deliveries is durable (wakes the dispatcher), with the
   * endpoints they are for and the deliveries themselves (the dispatcher claims them by id).
   */
  onDeliveries?: (
    count: number,
    endpointIds: Set<string>,
    deliveries?: { id: string; endpointId: string }[],
  ) => void;
  /** Called after a commit that deferred its fan-out is durable (starts expanding it). */
  onDeferredFanOut?: () => void;
  /** Called once the commit is durable, before the response is sent (metrics). */
  afterCommit?: (durationMs: number) => void;
  /** The event-type catalog (DESIGN §9); absent = every type accepted unchecked. */
  catalog?: EventTypeCatalog;
  /** Each commit runs in an `outboxd.commit` span whose context its events store. */
  tracing?: Tracing;
}

/** A commit's answer, plus what the response's headers need. */
export interface CommitAnswer extends CommitOutcome {
  /** When the most recently deprecated event type this commit used was deprecated (ms), or null. */
  deprecatedAt: number | null;
}

export class CommitService {
  readonly #deps: CommitServiceDeps;
  /** Idempotency keys whose first request is still running in this process. */
  readonly #inProgress = new Set<string>();

  constructor(deps: CommitServiceDeps) {
    this.#deps = deps;
  }

  commit(request: CommitRequest): Promise<CommitAnswer> {
    // With tracing on, the events store the commit span's context (their deliveries become its
    // children); with it off, the caller's traceparent as it came.
    const tracing = this.#deps.tracing;
    if (tracing?.enabled) return this.#traced(request, tracing);
    const parent = request.traceparent;
    return this.#commit(request, typeof parent === "object" ? parent.traceparent : parent);
  }

  /** The commit in an `outboxd.commit` span (src/ops/tracing.ts). */
  async #traced(request: CommitRequest, tracing: Tracing): Promise<CommitAnswer> {
    const span = tracing.commitBegun(request.traceparent);
    try {
      const answer = await this.#commit(request, span.traceparent);
      tracing.commitEnded(span, answer);
      return answer;
    } catch (error) {
      tracing.commitFailed(span, error);
      throw error;
    }
  }

  async #commit(request: CommitRequest, traceparent: string | undefined): Promise<CommitAnswer> {
    const { db, limits, clock } = this.#deps;
    const started = performance.now();
    const now = clock();
    const idempotency = request.idempotencyKey === undefined ? undefined : checkKey(request);
    let input: CommitInput;
    let deprecatedAt: number | null;
    try {
      input = normalizeCommit(request.body, {
        by: request.by,
        now,
        limits,
        idempotency,
        traceparent,
        conflictStatus: request.conflictStatus ?? 409,
      });
      deprecatedAt = this.#deps.catalog?.check(request.body.events ?? [], "/events") ?? null;
    } catch (error) {
      // A retry is answered from its stored response even when its body no longer passes the rules
      // that depend on the time (a deliverBy now in the past) or the catalog. Only then, or when the
      // key is busy (below), is it looked up before the write: commitOp looks it up inside the write
      // transaction, which is what decides, so nearly every commit reads nothing more on this thread.
      if (idempotency && error instanceof Problem) {
        const replay = await this.#storedAnswer(request, idempotency, now);
        if (replay) return replay;
      }
      throw error;
    }
    if (request.eventIdOwner !== undefined) input.eventIdOwner = request.eventIdOwner;
    // Only a driver that writes groups itself reads the announcement (remote-writer.ts).
    if (!db.driver.writeGroup) input.announceReads = false;
    let guard: string | undefined;
    if (idempotency) {
      guard = `${request.by.tokenId}\u0000${idempotency.key}`;
      if (this.#inProgress.has(guard)) {
        // Held by the first request with this key (nothing stored yet: 409) or by a retry being
        // answered inside the write, whose stored response answers this one too.
        const replay = await this.#storedAnswer(request, idempotency, now);
        if (replay) return replay;
        throw problems.conflict(
          "idempotency-in-progress",
          "a request with this Idempotency-Key is still being processed; retry shortly",
        );
      }
      this.#inProgress.add(guard);
    }
    let outcome: CommitOutcome;
    try {
      // The dispatcher's head leases are lent to it (db/writer-ops.ts).
      outcome = await db.write((request.write ?? commitWrite)(input));
    } finally {
      if (guard !== undefined) this.#inProgress.delete(guard);
    }
    if (outcome.replayed) return { ...outcome, deprecatedAt: null };
    failpoint("commit.after_commit");
    this.#deps.afterCommit?.(performance.now() - started);
    if (outcome.deferredDeliveries > 0) this.#deps.onDeferredFanOut?.();
    // Deferred deliveries wake the dispatcher as they are expanded.
    if (outcome.deliveries > outcome.deferredDeliveries) {
      const deliveries = outcome.result.events.flatMap((e) => e.deliveries);
      const endpointIds = new Set(deliveries.map((d) => d.endpointId));
      // Named only when all of them exist now (none deferred): the dispatcher claims them by id.
      const named = outcome.deferredDeliveries === 0 ? deliveries : undefined;
      this.#deps.onDeliveries?.(outcome.deliveries - outcome.deferredDeliveries, endpointIds, named);
    }
    // The operation's own answer, completed (not copied): it is nobody else's.
    const answer = outcome as CommitAnswer;
    answer.deprecatedAt = deprecatedAt;
    return answer;
  }

  /** The stored answer to an earlier request with this key, read on this thread before any write. */
  async #storedAnswer(
    request: CommitRequest,
    idempotency: { key: string; requestHash: string },
    now: number,
  ): Promise<CommitAnswer | undefined> {
    const replay = await this.#deps.db.driver.read(idempotentReplay(request.by.tokenId, idempotency, now));
    return replay ? { ...replay, deprecatedAt: null } : undefined;
  }
}

function checkKey(request: CommitRequest): { key: string; requestHash: string } {
  const key = checkIdempotencyKey(request.idempotencyKey ?? "");
  // The conflict mode is part of the request: a PUT and a commit with one key are different requests.
  const requestHash = sha256Hex(
    canonicalJson({ body: request.rawBody, mode: request.conflictStatus ?? 409 }),
  );
  return { key, requestHash };
}
