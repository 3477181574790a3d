// What a commit takes and answers (commit-op.ts runs it; event-id-replay.ts answers a retry of one).

export interface RecordWrite {
  collection: string;
  id: string;
  /** undefined = unconditional; 0 = must never have existed; n = must be at version n. */
  expectedVersion: number | undefined;
  /** JSON text of the new data, or null for a delete. */
  data: string | null;
  /**
   * The digest the ledger keeps of `data` (ledger/append.ts dataDigest), made where the input was
   * (normalize.ts, from the parsed document: no parse of the text, and no JCS at all for a document
   * already in key order), so the single writer, on a thread of its own by default, spends no hash
   * nor JCS on it. undefined: commitOp makes it from the text.
   */
  dataDigest?: string | null;
}

export interface EventWrite {
  /** Client-chosen UUID, or undefined to generate one. */
  id: string | undefined;
  type: string;
  aggregate: string;
  /** JSON text of the payload. */
  payload: string;
  /** The digest the ledger keeps of `payload`, made where the input was (as RecordWrite.dataDigest). */
  payloadDigest?: string | null;
  deliverAfter: number | null;
  /** Absolute deadline; computed by validation from deliverBy/deliverWithin. */
  deliverBy: number;
  /** Explicit endpoint ids replacing type-based fan-out, or undefined. */
  endpoints: string[] | undefined;
  /** An endpoint type-based fan-out leaves out (a system event's own endpoint: DESIGN §19). */
  excludeEndpoint?: string | undefined;
}

/** Who commits: the token of the request (for an approved proposal, the approver's). */
export interface Committer {
  tokenId: string;
  tokenName: string;
  /** The proposal this commit applies, if any (the ledger keeps it with the commit). */
  proposalId?: string | undefined;
}

export interface CommitInput {
  /** null: outboxd's own commit (a system event of DESIGN §19 that no person caused). */
  by: Committer | null;
  /** The token whose event ids these are when not `by` (an approved proposal's: the proposer's). */
  eventIdOwner?: string | undefined;
  records: RecordWrite[];
  events: EventWrite[];
  idempotency: { key: string; requestHash: string } | undefined;
  traceparent: string | undefined;
  /** How a failed expectation is reported: a commit says 409, a PUT with If-Match says 412. */
  conflictStatus: 409 | 412;
  /** The most deliveries this commit may create (OUTBOXD_MAX_DELIVERIES_PER_COMMIT). */
  maxDeliveries: number;
  /**
   * false: the reads need not be announced (op.ts `prefetch`), as on a local file, where the
   * writer ignores the announcement: the list is not even built.
   */
  announceReads?: boolean;
  now: number;
}

export interface CommitResult {
  commitId: string;
  records: { collection: string; id: string; version: number; deleted: boolean }[];
  events: {
    id: string;
    type: string;
    aggregate: string;
    sequence: number;
    deliverBy: string;
    deliveries: { id: string; endpointId: string }[];
  }[];
}

/** What the PUT route needs beyond the commit response. */
export interface WrittenRecord {
  created: boolean;
  createdAt: number;
  updatedAt: number;
}

/** What a commit answers; stored whole for idempotent retries, so a replay answers the same. */
export interface CommitOutcome {
  replayed: boolean;
  result: CommitResult;
  written: WrittenRecord[];
  /** Deliveries this commit created (0 for a replay), inserted or deferred. */
  deliveries: number;
  /** How many of them were deferred: they become rows as the fan-out is expanded (enqueue.ts). */
  deferredDeliveries: number;
}
