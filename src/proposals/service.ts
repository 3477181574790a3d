// Proposals (DESIGN §10): an agent proposes a commit, a person approves it, and only then is it
// applied — through the same commit path as any other commit, by the approver's token, in one
// transaction with the proposal's move to `approved`. A proposal that can no longer be applied
// becomes `conflicted` with the problem that stopped it, and nothing is written.
import { Cron } from "croner";
import type { TokenIdentity } from "../auth/tokens.ts";
import { type CommitBody, type Limits, normalizeCommit } from "../commit/normalize.ts";
import type { CommitAnswer, CommitService } from "../commit/service.ts";
import type { Database } from "../db/open.ts";
import type { EventTypeCatalog } from "../event-types/catalog.ts";
import { canonicalJson, sha256Hex } from "../lib/canonical-json.ts";
import { parseDuration } from "../lib/duration.ts";
import { checkIdempotencyKey } from "../lib/idempotency.ts";
import { newId } from "../lib/ids.ts";
import { type FieldError, invalidField, Problem, problems } from "../lib/problem.ts";
import type { Clock } from "../lib/time.ts";
import type { TraceParent } from "../ops/tracing.ts";
import {
  type Actor,
  currentRecords,
  existingEndpoints,
  getProposal,
  hasExpiredProposals,
  listProposals,
  type ProposalRow,
  type ProposalStatus,
  type ProposalView,
  proposalView,
} from "./store.ts";
import {
  commitApprovingWrite,
  decideProposalWrite,
  expireProposalsWrite,
  notPending,
  proposalReplay,
  pruneProposalsWrite,
  storeProposalWrite,
} from "./writes.ts";

export interface ProposalBody {
  commit: CommitBody;
  summary: string;
  expiresIn?: string | null | undefined;
}

export type Decision = "approved" | "rejected" | "conflicted" | "expired";

export interface ProposalServiceDeps {
  db: Database;
  clock: Clock;
  commits: CommitService;
  catalog: EventTypeCatalog;
  limits: Limits;
  /** OUTBOXD_PROPOSAL_TTL: how long a proposal waits unless it names expiresIn. */
  ttlMs: number;
  /** OUTBOXD_RETENTION: how long decided, unapproved proposals are kept. */
  retentionMs: number;
  /** The sweep's schedule (the dispatcher's: proposals expire with the deadlines). */
  cron: string;
  onDecision?: (decision: Decision, count: number) => void;
  onSweepError?: (error: unknown) => void;
}

const MIN_EXPIRES_MS = 1000;
const MAX_EXPIRES_MS = 30 * 86_400_000;
/** An Idempotency-Key answers retries this long (as for commits, DESIGN §3). */
const PRUNE_EVERY_MS = 60_000;

export class ProposalService {
  readonly #deps: ProposalServiceDeps;
  #cron: Cron | null = null;
  #prunedAt = 0;

  constructor(deps: ProposalServiceDeps) {
    this.#deps = deps;
  }

  /**
   * Validates the commit now as a commit would be (pointers under /commit), requires
   * expectedVersion on every record write, and stores the proposal as pending.
   */
  async propose(
    by: TokenIdentity,
    body: ProposalBody,
    rawBody: unknown,
    idempotencyKey: string | undefined,
  ): Promise<{ proposal: ProposalView; replayed: boolean; deprecatedAt: number | null }> {
    const { db, clock } = this.#deps;
    const now = clock();
    const idempotency = idempotencyKey === undefined ? undefined : keyOf(idempotencyKey, rawBody);
    if (idempotency) {
      const replay = await db.driver.read(proposalReplay(by.id, idempotency, now));
      if (replay) return { proposal: proposalView(replay), replayed: true, deprecatedAt: null };
    }
    const deprecatedAt = await this.#validate(by, body.commit, now);
    const expiresInMs = expiresIn(body.expiresIn, this.#deps.ttlMs);
    const row: ProposalRow = {
      id: newId("prp", now),
      status: "pending",
      summary: body.summary,
      commit: JSON.stringify(body.commit),
      proposedByTokenId: by.id,
      proposedByTokenName: by.name,
      idempotencyKey: idempotency?.key ?? null,
      requestHash: idempotency?.requestHash ?? null,
      createdAt: now,
      expiresAt: now + expiresInMs,
      decidedAt: null,
      decidedByTokenId: null,
      decidedByTokenName: null,
      reason: null,
      result: null,
      commitId: null,
    };
    // Decided again inside the write: another request with this key may have won meanwhile.
    const stored = await db.write(storeProposalWrite(row, idempotency, now));
    return { proposal: proposalView(stored.row), replayed: stored.replayed, deprecatedAt };
  }

  /** The proposal with each record's current state (the diff's left side). */
  async get(id: string): Promise<ProposalView & { current: unknown[] }> {
    const row = await this.#deps.db.driver.read(getProposal(id));
    if (!row) throw problems.notFound(`proposal ${id} does not exist`);
    const commit = JSON.parse(row.commit) as CommitBody;
    const current = await this.#deps.db.driver.read(currentRecords(commit.records ?? []));
    return { ...proposalView(row), current };
  }

  async list(
    status: ProposalStatus | undefined,
    limit: number,
    after: string | undefined,
  ): Promise<ReturnType<typeof proposalView>[]> {
    const rows = await this.#deps.db.driver.read(listProposals(status, limit, after));
    return rows.map((row) => proposalView(row, false));
  }

  /**
   * Applies the proposal as a commit by `by` (never its proposer), re-validating everything and
   * re-checking every expectedVersion in the same transaction that marks it approved.
   */
  async approve(
    by: TokenIdentity,
    id: string,
    reason: string | null,
    traceparent: TraceParent | undefined,
  ): Promise<{ proposal: ProposalView; deprecatedAt: number | null }> {
    const { db, clock, commits } = this.#deps;
    const row = await this.#pending(id, by, "approve");
    if (row === "repeat") {
      const again = await db.driver.read(getProposal(id));
      if (!again) throw problems.notFound(`proposal ${id} does not exist`);
      return { proposal: proposalView(again), deprecatedAt: null };
    }
    const actor: Actor = { tokenId: by.id, tokenName: by.name };
    const body = JSON.parse(row.commit) as CommitBody;
    let answer: CommitAnswer;
    try {
      answer = await commits.commit({
        by: { ...actor, proposalId: id },
        body,
        rawBody: body,
        idempotencyKey: undefined,
        traceparent,
        eventIdOwner: row.proposedByTokenId,
        write: (input) => commitApprovingWrite(input, { proposalId: id, by: actor, reason, at: clock() }),
      });
    } catch (error) {
      if (!(error instanceof Problem) || error.slug === "proposal-not-pending") throw error;
      const problem = underCommit(error);
      const marked = await db.write(
        decideProposalWrite(id, { status: "conflicted", by: actor, reason }, clock(), {
          json: JSON.stringify(problem.toJSON()),
          commitId: null,
        }),
      );
      if (marked) this.#deps.onDecision?.("conflicted", 1);
      throw problem;
    }
    this.#deps.onDecision?.("approved", 1);
    const approved = await db.driver.read(getProposal(id));
    if (!approved) throw new Error(`proposal ${id} vanished after its approval`);
    return { proposal: proposalView(approved), deprecatedAt: answer.deprecatedAt };
  }

  async reject(by: TokenIdentity, id: string, reason: string | null): Promise<ProposalView> {
    const { db, clock } = this.#deps;
    await this.#pending(id, by, "reject");
    const decided = await db.write(
      decideProposalWrite(
        id,
        { status: "rejected", by: { tokenId: by.id, tokenName: by.name }, reason },
        clock(),
      ),
    );
    if (!decided) throw notPending(id, "was decided by someone else meanwhile");
    this.#deps.onDecision?.("rejected", 1);
    const row = await db.driver.read(getProposal(id));
    if (!row) throw new Error(`proposal ${id} vanished after its rejection`);
    return proposalView(row);
  }

  /**
   * Expires pending proposals past expiresAt; prunes old unapproved ones about once a minute.
   * It looks before it writes: a durable write every second, even one that changes nothing,
   * costs an fsync that every bookkeeping write queued behind it waits for.
   */
  async sweep(): Promise<void> {
    const { db, clock, retentionMs } = this.#deps;
    const now = clock();
    if (await db.driver.read(hasExpiredProposals(now))) {
      const expired = await db.write(expireProposalsWrite(now));
      if (expired > 0) this.#deps.onDecision?.("expired", expired);
    }
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now;
      await db.write(pruneProposalsWrite(now - retentionMs));
    }
  }

  start(): void {
    this.#cron ??= new Cron(this.#deps.cron, { protect: true }, () =>
      this.sweep().catch((error) => this.#deps.onSweepError?.(error)),
    );
  }

  stop(): void {
    this.#cron?.stop();
    this.#cron = null;
  }

  /**
   * The pending proposal a decision applies to, or "repeat" for an approval repeated by the token
   * that approved it. Refuses the proposer's own approval (four eyes, admin included), decisions
   * on proposals that are not pending, and approval of expired ones (which it marks expired).
   */
  async #pending(
    id: string,
    by: TokenIdentity,
    decision: "approve" | "reject",
  ): Promise<ProposalRow | "repeat"> {
    const { db, clock } = this.#deps;
    const row = await db.driver.read(getProposal(id));
    if (!row) throw problems.notFound(`proposal ${id} does not exist`);
    if (decision === "approve" && row.proposedByTokenId === by.id) {
      throw problems.forbidden("a proposal must be approved by another token than the one that proposed it");
    }
    if (decision === "approve" && row.status === "approved" && row.decidedByTokenId === by.id)
      return "repeat";
    if (row.status !== "pending") throw notPending(id, `is ${row.status}`);
    if (row.expiresAt <= clock()) {
      const expired = await db.write(
        decideProposalWrite(id, { status: "expired", by: null, reason: null }, row.expiresAt),
      );
      if (expired) this.#deps.onDecision?.("expired", 1);
      throw notPending(id, "expired");
    }
    return row;
  }

  /** The commit checks of DESIGN §3 and §9, with pointers under /commit, plus expectedVersion on every write. */
  async #validate(by: TokenIdentity, commit: CommitBody, now: number): Promise<number | null> {
    const { limits, catalog, db } = this.#deps;
    const errors: FieldError[] = [];
    for (const [i, record] of (commit.records ?? []).entries()) {
      if (record.expectedVersion == null) {
        errors.push({
          pointer: `/commit/records/${i}/expectedVersion`,
          detail: "is required in a proposal: the approver approves a change to a known version",
        });
      }
    }
    underCommitOnThrow(
      () =>
        normalizeCommit(commit, {
          by: { tokenId: by.id, tokenName: by.name },
          now,
          limits,
          idempotency: undefined,
          traceparent: undefined,
          conflictStatus: 409,
        }),
      errors,
    );
    const deprecatedAt = underCommitOnThrow(() => catalog.check(commit.events ?? [], "/events"), errors);
    const named = (commit.events ?? []).flatMap((e, i) => (e.endpoints ?? []).map((id, j) => ({ id, i, j })));
    if (named.length > 0) {
      const known = await db.driver.read(existingEndpoints(named.map((n) => n.id)));
      for (const { id, i, j } of named) {
        if (!known.has(id))
          errors.push({ pointer: `/commit/events/${i}/endpoints/${j}`, detail: "unknown endpoint" });
      }
    }
    if (errors.length > 0) throw problems.invalid(errors);
    return deprecatedAt;
  }
}

function keyOf(key: string, rawBody: unknown): { key: string; requestHash: string } {
  checkIdempotencyKey(key);
  return { key, requestHash: sha256Hex(canonicalJson(rawBody)) };
}

function expiresIn(text: string | null | undefined, fallback: number): number {
  if (text == null) return fallback;
  const ms = parseDuration(text);
  if (ms === null || ms < MIN_EXPIRES_MS || ms > MAX_EXPIRES_MS) {
    throw invalidField("/expiresIn", "must be a duration from 1s to 30d");
  }
  return ms;
}

/** The same problem with its pointers moved under /commit (they point into the proposed commit). */
function underCommit(problem: Problem): Problem {
  const errors = problem.extra.errors as FieldError[] | undefined;
  if (!errors) return problem;
  const moved = errors.map((e) => ({
    ...e,
    pointer: e.pointer === "" || e.pointer.startsWith("/") ? `/commit${e.pointer}` : e.pointer,
  }));
  if (problem.slug === "validation") return problems.invalid(moved);
  return new Problem(problem.status, problem.slug, problem.title, problem.detail, {
    ...problem.extra,
    errors: moved,
  });
}

/** Runs `check`; a 422 it throws adds its errors (under /commit) to `errors` instead. */
function underCommitOnThrow<T>(check: () => T, errors: FieldError[]): T | null {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof Problem) || error.status !== 422) throw error;
    errors.push(...((underCommit(error).extra.errors as FieldError[] | undefined) ?? []));
    return null;
  }
}
