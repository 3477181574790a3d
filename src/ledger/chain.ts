// The hash chain of DESIGN §13: what a commit's content is and how its hash follows from the
// previous one. The one place both the writer (append.ts) and `outboxd verify` compute it.
import { canonicalJson, sha256Hex } from "../lib/canonical-json.ts";
import { iso } from "../lib/time.ts";

/** The previous hash of the first commit. */
export const ZERO_HASH = "0".repeat(64);
/** The commit the ledger migration writes for databases from before the ledger that hold records (seq 0). */
export const GENESIS_ID = "cmt_genesis";

export interface ChainRecord {
  collection: string;
  id: string;
  version: number;
  deleted: boolean;
  dataDigest: string | null;
}

export interface ChainEvent {
  id: string;
  type: string;
  aggregate: string;
  sequence: number;
  payloadDigest: string;
  deliverAfter: number | null;
  deliverBy: number;
}

export interface ChainCommit {
  seq: number;
  commitId: string;
  tokenId: string | null;
  proposalId: string | null;
  at: number;
  records: ChainRecord[];
  /** In request order (the order they were inserted). */
  events: ChainEvent[];
}

/**
 * Lowercase hex sha256 of the JCS of a JSON document given as text. `canonical`: the text is known
 * to be its own JCS (JSON.stringify of a value in JCS order, canonical-json.ts inSortedOrder), so
 * it is hashed as it is, not parsed and written again.
 */
export function digestOf(json: string, canonical = false): string {
  return sha256Hex(canonical ? json : canonicalJson(JSON.parse(json)));
}

/** Records sorted by collection then id (UTF-16 code units; the names are ASCII anyway). */
function byKey(a: ChainRecord, b: ChainRecord): number {
  if (a.collection !== b.collection) return a.collection < b.collection ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The content whose JCS is hashed, exactly as DESIGN §13 lists it (nulls explicit). Keys are
 * written in JCS order at every depth and every value is a string, an integer, a boolean or
 * null, so JSON.stringify writes its JCS (test/ledger/chain.test.ts compares with canonicalJson).
 */
export function chainContent(commit: ChainCommit) {
  return {
    at: iso(commit.at),
    commitId: commit.commitId,
    events: commit.events.map((e) => ({
      aggregate: e.aggregate,
      deliverAfter: iso(e.deliverAfter),
      deliverBy: iso(e.deliverBy),
      id: e.id,
      payloadDigest: e.payloadDigest,
      sequence: e.sequence,
      type: e.type,
    })),
    proposalId: commit.proposalId,
    records: (commit.records.length > 1 ? [...commit.records].sort(byKey) : commit.records).map((r) => ({
      collection: r.collection,
      dataDigest: r.dataDigest,
      deleted: r.deleted,
      id: r.id,
      version: r.version,
    })),
    seq: commit.seq,
    tokenId: commit.tokenId,
  };
}

/** hash = lowercase hex sha256(utf8(previousHash + JCS(content))). */
export function chainHash(previousHash: string, commit: ChainCommit): string {
  return sha256Hex(previousHash + JSON.stringify(chainContent(commit)));
}
