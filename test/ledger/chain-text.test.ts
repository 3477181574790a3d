// The chain's text is written out by hand (src/ledger/chain.ts chainText): it must be, byte for
// byte, the JCS of the content DESIGN §13 lists, or every hash of the ledger changes.

import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { type ChainCommit, chainHash, chainText } from "../../src/ledger/chain.ts";
import { canonicalJson } from "../../src/lib/canonical-json.ts";

/** DESIGN §13's content of a commit, as an object (nulls explicit, records sorted by key). */
function content(commit: ChainCommit) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    seq: commit.seq,
    commitId: commit.commitId,
    tokenId: commit.tokenId,
    proposalId: commit.proposalId,
    at: iso(commit.at),
    records: [...commit.records]
      .sort((a, b) => (`${a.collection}\u0000${a.id}` < `${b.collection}\u0000${b.id}` ? -1 : 1))
      .map((r) => ({
        collection: r.collection,
        id: r.id,
        version: r.version,
        deleted: r.deleted,
        dataDigest: r.dataDigest,
      })),
    events: commit.events.map((e) => ({
      id: e.id,
      type: e.type,
      aggregate: e.aggregate,
      sequence: e.sequence,
      payloadDigest: e.payloadDigest,
      deliverAfter: iso(e.deliverAfter),
      deliverBy: iso(e.deliverBy) as string,
    })),
  };
}

const DIGEST = "0f".repeat(32);
const commits: ChainCommit[] = [
  { seq: 0, commitId: "cmt_genesis", tokenId: null, proposalId: null, at: 0, records: [], events: [] },
  {
    seq: 41,
    commitId: "cmt_01JZ",
    tokenId: "tok_1",
    proposalId: null,
    at: 1_790_000_000_123,
    records: [{ collection: "orders", id: "o-1", version: 1, deleted: false, dataDigest: DIGEST }],
    events: [
      {
        id: "0193a1f2-0000-7000-8000-000000000001",
        type: "order.paid",
        aggregate: "orders/o-1",
        sequence: 7,
        payloadDigest: DIGEST,
        deliverAfter: null,
        deliverBy: 1_790_086_400_000,
      },
    ],
  },
  {
    seq: 9_007_199_254_740_991,
    commitId: 'cmt_"quoted\\',
    tokenId: "tok_\u00e9\u2028\ud83d\ude00",
    proposalId: "prp_\n\t\u0001",
    at: 1_790_000_000_000,
    records: [
      { collection: "b", id: "z", version: 3, deleted: true, dataDigest: null },
      { collection: "a", id: "y\u00ff", version: 12, deleted: false, dataDigest: DIGEST },
      { collection: "a", id: "x", version: 1, deleted: false, dataDigest: DIGEST },
    ],
    events: [
      {
        id: "0193a1f2-0000-7000-8000-000000000002",
        type: "thing.done",
        aggregate: 'things/\u00e9"\\',
        sequence: 1,
        payloadDigest: DIGEST,
        deliverAfter: 1_790_000_060_000,
        deliverBy: 1_790_003_600_000,
      },
      {
        id: "0193a1f2-0000-7000-8000-000000000003",
        type: "thing.noted",
        aggregate: "things/t",
        sequence: 2,
        payloadDigest: DIGEST,
        deliverAfter: null,
        deliverBy: 8_640_000_000_000_000,
      },
    ],
  },
];

test("the chain's text is the JCS of DESIGN §13's content, escapes, nulls and record order included", () => {
  for (const commit of commits) expect(chainText(commit)).toBe(canonicalJson(content(commit)));
});

test("the hash is sha256 of the previous hash and that text", () => {
  const previous = "ab".repeat(32);
  for (const commit of commits) {
    const expected = createHash("sha256")
      .update(previous + canonicalJson(content(commit)))
      .digest("hex");
    expect(chainHash(previous, commit)).toBe(expected);
  }
});
