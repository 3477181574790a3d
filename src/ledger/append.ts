// The ledger's part of a commit (DESIGN §13), inside the commit's write transaction. A record's current version lives in its records row (commit id and data digest
// beside the data); before a commit replaces it, `supersede` moves it into record_versions, so
// creating a record costs the ledger no row and changing one costs one. The commit operation
// calls `appendCommit` as its last step: the commit row with the next seq and its hash. That row
// is a chain step (op.ts): whoever runs the group reads the chain's head once and places each
// commit's row on the one before, in the order they are written (group-chain.ts on a local file,
// remote-writer.ts on a remote database); an operation that fails is rolled back with its row,
// so the next one takes the same seq: no gaps.
import { chain, exec, type Link, type Op, type Statement } from "../db/op.ts";
import {
  type ChainCommit,
  type ChainEvent,
  type ChainRecord,
  chainHash,
  digestOf,
  ZERO_HASH,
} from "./chain.ts";

/**
 * Bench only (bench/scenarios/ledger.ts, ledger-cpu.ts), not a setting: runs commits without the
 * ledger's statements, to measure what the ledger costs. A database written this way does not
 * verify. ledger-cpu.ts flips it between blocks of commits in one process.
 */
export const ledgerBenchSwitch = { off: process.env.OUTBOXD_BENCH_WITHOUT_LEDGER === "1" };

export interface LedgerCommit {
  commitId: string;
  /** null for outboxd's own commits (DESIGN §19 system events) when no person acted. */
  tokenId: string | null;
  tokenName: string | null;
  /** The proposal this commit applies (the token is then its approver's), or null. */
  proposalId: string | null;
  at: number;
  /** Every record write of the commit, with its data's digest (`dataDigest`; null for a delete). */
  records: ChainRecord[];
  /** The events the commit inserted, in request order. */
  events: ChainEvent[];
}

const SQL = {
  head: "SELECT seq, hash FROM commits WHERE seq = (SELECT max(seq) FROM commits)",
  // The current version, as it is, into the history (a delete's data is null there).
  supersede: `INSERT INTO record_versions (collection, id, version, data, deleted, data_digest, commit_id, at)
    SELECT collection, id, version, CASE WHEN deleted = 1 THEN NULL ELSE data END, deleted, data_digest, commit_id,
      updated_at
    FROM records WHERE collection = :collection AND id = :id`,
  // No ON CONFLICT: a seq someone else took (another machine that chained first) fails the row.
  insertCommit: `INSERT INTO commits (id, token_id, created_at, seq, hash, token_name, proposal_id, record_count,
      event_count, record_keys)
    VALUES (:id, :tokenId, :at, :seq, :hash, :tokenName, :proposalId, :recordCount, :eventCount, :recordKeys)`,
  // The same, after events: the commit's own were the last inserted (this runs as the commit's last
  // statement, on a remote database too), so the largest pos is its last event's (commits.event_pos).
  insertCommitWithEvents: `INSERT INTO commits (id, token_id, created_at, seq, hash, token_name, proposal_id,
      record_count, event_count, record_keys, event_pos)
    VALUES (:id, :tokenId, :at, :seq, :hash, :tokenName, :proposalId, :recordCount, :eventCount, :recordKeys,
      (SELECT max(pos) FROM events))`,
};

/** The chain's head: shared by the operations of a group (remote-writer.ts reads it once per group). */
const chainHeadRead: Statement = { sql: SQL.head, args: {}, kind: "get", batchShared: { table: "commits" } };

/**
 * The reads the ledger's part of a commit makes, for the commit operation to announce with its
 * own (op.ts `prefetch`): on the remote write path the head is then read in the group's one read
 * request, not in a round of its own.
 */
export function ledgerReads(): Statement[] {
  return ledgerBenchSwitch.off ? [] : [chainHeadRead];
}

/**
 * The digest an event's payload is stored and chained with (null on the bench's ledger-less
 * runs); `written`: the value the text was written from, if at hand (chain.ts digestOf).
 */
export function payloadDigest(payload: string, written?: unknown): string | null {
  return ledgerBenchSwitch.off ? null : digestOf(payload, written);
}

/** The digest a record's new data is stored and chained with: null for a delete (and on the bench's ledger-less runs). */
export function dataDigest(data: string | null, written?: unknown): string | null {
  return data === null || ledgerBenchSwitch.off ? null : digestOf(data, written);
}

/** Before a commit writes a record that exists: its current version goes into the history. */
export function* supersede(collection: string, id: string): Op<void> {
  if (!ledgerBenchSwitch.off) yield* exec(SQL.supersede, { collection, id });
}

/** The value of commits.record_keys: where `outboxd verify` finds the versions a commit wrote. */
export function recordKeys(records: { collection: string; id: string; version: number }[]): string {
  return JSON.stringify(records.map((r) => [r.collection, r.id, r.version]));
}

/** The commit row's values (a new object each time: the remote write path may build an entry again on another head). */
function commitRow(commit: LedgerCommit, seq: number | null, hash: string | null, recordKeys: string | null) {
  return {
    id: commit.commitId,
    tokenId: commit.tokenId,
    at: commit.at,
    tokenName: commit.tokenName,
    proposalId: commit.proposalId,
    recordCount: commit.records.length,
    eventCount: commit.events.length,
    seq,
    hash,
    recordKeys,
  };
}

export function* appendCommit(commit: LedgerCommit): Op<void> {
  if (ledgerBenchSwitch.off) {
    yield* exec(SQL.insertCommit, commitRow(commit, null, null, null));
    return;
  }
  const { records } = commit;
  const keys = recordKeys(records);
  yield* chain({
    head: chainHeadRead,
    append(previous: Link | undefined) {
      // No head yet: the first commit of a new database (seq 0, previous hash 64 zeros).
      const head = previous ?? { seq: -1, hash: ZERO_HASH };
      // Only a genesis commit the migration wrote and nobody sealed yet lacks its hash.
      if (typeof head.hash !== "string") {
        throw new Error("the ledger's genesis commit is not sealed: run `outboxd migrate`");
      }
      const seq = head.seq + 1;
      const chained: ChainCommit = {
        seq,
        commitId: commit.commitId,
        tokenId: commit.tokenId,
        proposalId: commit.proposalId,
        at: commit.at,
        records,
        events: commit.events,
      };
      const hash = chainHash(head.hash, chained);
      return {
        link: { seq, hash },
        statement: {
          sql: commit.events.length > 0 ? SQL.insertCommitWithEvents : SQL.insertCommit,
          args: commitRow(commit, seq, hash, keys),
          kind: "run",
        },
      };
    },
  });
}
