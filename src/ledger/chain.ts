// The hash chain of DESIGN §13: what a commit's content is and how its hash follows from the
// previous one. The one place both the writer (append.ts) and `outboxd verify` compute it.
import { canonicalJson, inSortedOrder, sha256Hex } from "../lib/canonical-json.ts";
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
 * Lowercase hex sha256 of the JCS of a JSON document given as text. `written`: the value the text
 * was written from (`JSON.stringify(written) === json`), when at hand: its JCS is then made from it
 * without parsing the text, and when its keys are already in JCS order (canonical-json.ts
 * inSortedOrder) the text is its own JCS and is hashed as it is.
 */
export function digestOf(json: string, written?: unknown): string {
  if (written === undefined) return sha256Hex(canonicalJson(JSON.parse(json)));
  return sha256Hex(inSortedOrder(written) ? json : canonicalJson(written));
}

/** Records sorted by collection then id (UTF-16 code units; the names are ASCII anyway). */
function byKey(a: ChainRecord, b: ChainRecord): number {
  if (a.collection !== b.collection) return a.collection < b.collection ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The JCS of a commit's content, exactly as DESIGN §13 lists it (nulls explicit): `{at, commitId,
 * events: [{aggregate, deliverAfter, deliverBy, id, payloadDigest, sequence, type}], proposalId,
 * records (sorted by key): [{collection, dataDigest, deleted, id, version}], seq, tokenId}`.
 * Written out directly, keys in JCS order at every depth, each value as JSON.stringify writes it
 * (strings escaped as JCS does them; an ISO time needs no escaping; integers and booleans as
 * text). Not an object handed to JSON.stringify: building that object cost about as much as
 * writing the text (test/ledger/chain-text.test.ts compares with canonicalJson of the object).
 */
export function chainText(commit: ChainCommit): string {
  let events = "";
  for (const e of commit.events) {
    const deliverAfter = e.deliverAfter === null ? "null" : `"${iso(e.deliverAfter)}"`;
    events +=
      `${events === "" ? "" : ","}{"aggregate":${quote(e.aggregate)},"deliverAfter":${deliverAfter},` +
      `"deliverBy":"${iso(e.deliverBy)}","id":${quote(e.id)},"payloadDigest":${quote(e.payloadDigest)},` +
      `"sequence":${number(e.sequence)},"type":${quote(e.type)}}`;
  }
  let records = "";
  for (const r of commit.records.length > 1 ? [...commit.records].sort(byKey) : commit.records) {
    records +=
      `${records === "" ? "" : ","}{"collection":${quote(r.collection)},"dataDigest":${quote(r.dataDigest)},` +
      `"deleted":${r.deleted},"id":${quote(r.id)},"version":${number(r.version)}}`;
  }
  return (
    `{"at":"${iso(commit.at)}","commitId":${quote(commit.commitId)},"events":[${events}],` +
    `"proposalId":${quote(commit.proposalId)},"records":[${records}],"seq":${number(commit.seq)},` +
    `"tokenId":${quote(commit.tokenId)}}`
  );
}

/** A string (or null) as JSON writes it: the same escapes as JCS. */
const quote: (text: string | null) => string = JSON.stringify;

/** A number as JSON writes it (the chain's are integers). */
function number(n: number): string {
  return Number.isFinite(n) ? String(n) : "null";
}

/** hash = lowercase hex sha256(utf8(previousHash + JCS(content))). */
export function chainHash(previousHash: string, commit: ChainCommit): string {
  return sha256Hex(previousHash + chainText(commit));
}
