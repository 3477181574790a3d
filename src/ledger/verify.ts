// `outboxd verify` (DESIGN §13): recomputes every digest and the whole hash chain from the stored
// rows, and checks that each record's current state is its newest version. Stops at the first
// commit that does not add up and says what differs. One read operation: on a local file, one
// snapshot, however long the chain.
import { all, get, type Op } from "../db/op.ts";
import { type ChainEvent, type ChainRecord, chainHash, digestOf, GENESIS_ID, ZERO_HASH } from "./chain.ts";

export type VerifyResult =
  | {
      ok: true;
      /** Entries of the chain, genesis included. */
      commits: number;
      head: string;
      /** Events from before the ledger, outside the chain. */
      unchainedEvents: number;
      erasedVersions: number;
      erasedEvents: number;
    }
  | {
      ok: false;
      /** The first commit that does not add up, or null when the fault names no commit. */
      commitId: string | null;
      seq: number | null;
      problem: string;
    };

interface CommitRow {
  id: string;
  seq: number;
  tokenId: string | null;
  proposalId: string | null;
  at: number;
  hash: string | null;
  recordCount: number | null;
  eventCount: number | null;
}

interface VersionRow {
  collection: string;
  id: string;
  version: number;
  data: string | null;
  deleted: number;
  dataDigest: string | null;
  erasedAt: number | null;
}

interface EventRow {
  id: string;
  type: string;
  aggregate: string;
  sequence: number;
  payload: string;
  payloadDigest: string | null;
  deliverAfter: number | null;
  deliverBy: number;
  erasedAt: number | null;
}

const PAGE = 500;

const VERSION_COLUMNS = `collection, id, version, data, deleted, data_digest AS dataDigest, erased_at AS erasedAt`;
const EVENT_COLUMNS = `id, type, aggregate, sequence, payload, payload_digest AS payloadDigest,
  deliver_after AS deliverAfter, deliver_by AS deliverBy, erased_at AS erasedAt`;
const CHAINED = "SELECT 1 FROM commits c WHERE c.id = x.commit_id AND c.seq IS NOT NULL";

const SQL = {
  commits: `SELECT id, seq, token_id AS tokenId, proposal_id AS proposalId, created_at AS at, hash,
      record_count AS recordCount, event_count AS eventCount
    FROM commits WHERE seq > :after ORDER BY seq LIMIT :limit`,
  genesisVersions: `SELECT ${VERSION_COLUMNS} FROM record_versions WHERE commit_id IS NULL ORDER BY pos`,
  versions: `SELECT ${VERSION_COLUMNS} FROM record_versions WHERE commit_id = :commitId ORDER BY pos`,
  events: `SELECT ${EVENT_COLUMNS} FROM events WHERE commit_id = :commitId ORDER BY pos`,
  // Rows that name a commit missing from the chain: what a removed commit row leaves behind.
  orphan: `SELECT min(commit_id) AS commitId FROM (
      SELECT commit_id FROM record_versions x WHERE commit_id IS NOT NULL AND NOT EXISTS (${CHAINED})
      UNION ALL
      SELECT commit_id FROM events x WHERE payload_digest IS NOT NULL AND NOT EXISTS (${CHAINED}))`,
  // Events outside the chain: those from before the ledger come before every chained event.
  unchained: `SELECT count(*) AS n, max(pos) AS lastPos FROM events x
    WHERE payload_digest IS NULL AND NOT EXISTS (${CHAINED})`,
  firstChainedEvent: "SELECT min(pos) AS pos FROM events WHERE payload_digest IS NOT NULL",
  strayEvent: `SELECT id, commit_id AS commitId FROM events x
    WHERE pos > :pos AND payload_digest IS NULL AND NOT EXISTS (${CHAINED}) ORDER BY pos LIMIT 1`,
  // Each record beside its newest version.
  current: `SELECT r.collection, r.id, r.version, r.deleted, r.data,
      v.version AS historyVersion, v.deleted AS historyDeleted, v.data_digest AS historyDigest,
      v.commit_id AS historyCommit
    FROM records r LEFT JOIN record_versions v ON v.pos = (
      SELECT w.pos FROM record_versions w WHERE w.collection = r.collection AND w.id = r.id
      ORDER BY w.version DESC LIMIT 1)
    WHERE (r.collection, r.id) > (:collection, :id) ORDER BY r.collection, r.id LIMIT :limit`,
  lostRecord: `SELECT v.collection, v.id, v.version, v.commit_id AS commitId FROM record_versions v
    WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.collection = v.collection AND r.id = v.id) LIMIT 1`,
  seqOf: "SELECT seq FROM commits WHERE id = :id",
  // Versions in no commit belong to the genesis commit; without one, they were added.
  strayVersion: `SELECT collection, id, version FROM record_versions
    WHERE commit_id IS NULL AND NOT EXISTS (SELECT 1 FROM commits WHERE id = '${GENESIS_ID}') LIMIT 1`,
};

class Mismatch extends Error {
  constructor(
    readonly commitId: string | null,
    readonly seq: number | null,
    readonly problem: string,
  ) {
    super(problem);
  }
}

/** The digest a stored document should have; a document that no longer parses was edited too. */
function digestOrNull(json: string): string | null {
  try {
    return digestOf(json);
  } catch {
    return null;
  }
}

export function* verifyLedger(): Op<VerifyResult> {
  const erased = { versions: 0, events: 0 };
  try {
    const head = yield* verifyChain(erased);
    const orphan = yield* get<{ commitId: string | null }>(SQL.orphan);
    if (orphan?.commitId) {
      throw new Mismatch(
        orphan.commitId,
        null,
        "the commit was removed: versions or events name it, but it is not in the chain",
      );
    }
    const stray = yield* get<{ collection: string; id: string; version: number }>(SQL.strayVersion);
    if (stray) {
      throw new Mismatch(
        null,
        null,
        `version ${stray.version} of ${stray.collection}/${stray.id} was added outside any commit of the chain`,
      );
    }
    const unchained = (yield* get<{ n: number; lastPos: number | null }>(SQL.unchained)) ?? {
      n: 0,
      lastPos: null,
    };
    const firstChained = (yield* get<{ pos: number | null }>(SQL.firstChainedEvent))?.pos ?? null;
    if (firstChained !== null) {
      const stray = yield* get<{ id: string; commitId: string }>(SQL.strayEvent, { pos: firstChained });
      if (stray) {
        throw new Mismatch(
          stray.commitId,
          null,
          `event ${stray.id} was added outside any commit of the chain (it has no digest and came after the ledger started)`,
        );
      }
    }
    yield* verifyCurrentState();
    return {
      ok: true,
      commits: head.commits,
      head: head.hash,
      unchainedEvents: unchained.n,
      erasedVersions: erased.versions,
      erasedEvents: erased.events,
    };
  } catch (error) {
    if (error instanceof Mismatch) {
      const seq =
        error.seq ??
        (error.commitId === null
          ? null
          : ((yield* get<{ seq: number | null }>(SQL.seqOf, { id: error.commitId }))?.seq ?? null));
      return { ok: false, commitId: error.commitId, seq, problem: error.problem };
    }
    throw error;
  }
}

function* verifyChain(erased: { versions: number; events: number }): Op<{ commits: number; hash: string }> {
  let previous = ZERO_HASH;
  let expected = 0;
  for (;;) {
    const commits = yield* all<CommitRow>(SQL.commits, { after: expected - 1, limit: PAGE });
    if (commits.length === 0) break;
    for (const commit of commits) {
      const fail = (problem: string) => new Mismatch(commit.id, commit.seq, problem);
      if (commit.seq !== expected) {
        // The commit at `expected` is gone; the rows it left behind usually name it.
        const orphan = yield* get<{ commitId: string | null }>(SQL.orphan);
        if (orphan?.commitId) {
          throw new Mismatch(
            orphan.commitId,
            expected,
            "the commit was removed from the chain (its versions or events remain)",
          );
        }
        throw fail(
          `seq ${expected} is missing before this commit: a commit was removed or the order was changed`,
        );
      }
      if (commit.hash === null) throw fail("the commit has no hash");
      const versions = yield* all<VersionRow>(
        commit.id === GENESIS_ID ? SQL.genesisVersions : SQL.versions,
        commit.id === GENESIS_ID ? {} : { commitId: commit.id },
      );
      const records: ChainRecord[] = versions.map((v) => {
        const key = `version ${v.version} of ${v.collection}/${v.id}`;
        if (v.deleted === 1) {
          if (v.data !== null || v.dataDigest !== null)
            throw fail(`${key} was edited: a delete carries no data`);
        } else if (v.data === null) {
          if (v.erasedAt === null) throw fail(`${key} was edited: its data is missing and it was not erased`);
          erased.versions++;
        } else if (digestOrNull(v.data) !== v.dataDigest) {
          throw fail(`${key} was edited: its data no longer matches its digest`);
        }
        return {
          collection: v.collection,
          id: v.id,
          version: v.version,
          deleted: v.deleted === 1,
          dataDigest: v.dataDigest,
        };
      });
      const eventRows =
        commit.id === GENESIS_ID ? [] : yield* all<EventRow>(SQL.events, { commitId: commit.id });
      const events: ChainEvent[] = eventRows.map((e) => {
        if (e.payloadDigest === null) throw fail(`event ${e.id} was edited: its digest is missing`);
        if (e.erasedAt !== null) erased.events++;
        else if (digestOrNull(e.payload) !== e.payloadDigest) {
          throw fail(`event ${e.id} was edited: its payload no longer matches its digest`);
        }
        return {
          id: e.id,
          type: e.type,
          aggregate: e.aggregate,
          sequence: e.sequence,
          payloadDigest: e.payloadDigest,
          deliverAfter: e.deliverAfter,
          deliverBy: e.deliverBy,
        };
      });
      if (commit.recordCount !== null && versions.length !== commit.recordCount) {
        throw fail(countProblem("version", commit.recordCount, versions.length));
      }
      if (commit.eventCount !== null && events.length !== commit.eventCount) {
        throw fail(countProblem("event", commit.eventCount, events.length));
      }
      const hash = chainHash(previous, {
        seq: commit.seq,
        commitId: commit.id,
        tokenId: commit.tokenId,
        proposalId: commit.proposalId,
        at: commit.at,
        records,
        events,
      });
      if (hash !== commit.hash) {
        throw fail(
          `the hash does not match: the commit's content (seq, token, time, a version's or event's fields or digest) ` +
            `was changed, commits were reordered, or the link to seq ${commit.seq - 1} is broken`,
        );
      }
      previous = commit.hash;
      expected++;
    }
  }
  return { commits: expected, hash: previous };
}

function countProblem(what: "version" | "event", recorded: number, found: number): string {
  const difference = recorded - found;
  return difference > 0
    ? `${difference} ${what}${difference === 1 ? " was" : "s were"} removed (${recorded} committed, ${found} found)`
    : `${-difference} ${what}${difference === -1 ? " was" : "s were"} added (${recorded} committed, ${found} found)`;
}

/** Each record's current state must be its newest version; every versioned record must exist. */
function* verifyCurrentState(): Op<void> {
  let after = { collection: "", id: "" };
  for (;;) {
    const rows = yield* all<{
      collection: string;
      id: string;
      version: number;
      deleted: number;
      data: string;
      historyVersion: number | null;
      historyDeleted: number | null;
      historyDigest: string | null;
      historyCommit: string | null;
    }>(SQL.current, { ...after, limit: PAGE });
    for (const r of rows) {
      const name = `${r.collection}/${r.id}`;
      if (r.historyVersion === null) {
        throw new Mismatch(
          null,
          null,
          `record ${name} (version ${r.version}) has no history: it was written outside a commit`,
        );
      }
      const commitId = r.historyCommit ?? GENESIS_ID;
      const differs =
        r.historyVersion !== r.version ||
        r.historyDeleted !== r.deleted ||
        (r.deleted === 0 && digestOrNull(r.data) !== r.historyDigest);
      if (differs) {
        throw new Mismatch(
          commitId,
          null,
          `record ${name} was edited: its current state (version ${r.version}${r.deleted ? ", deleted" : ""}) ` +
            `differs from its newest version in the ledger (version ${r.historyVersion})`,
        );
      }
    }
    const last = rows.at(-1);
    if (!last || rows.length < PAGE) break;
    after = { collection: last.collection, id: last.id };
  }
  const lost = yield* get<{ collection: string; id: string; version: number; commitId: string | null }>(
    SQL.lostRecord,
  );
  if (lost) {
    throw new Mismatch(
      lost.commitId ?? GENESIS_ID,
      null,
      `record ${lost.collection}/${lost.id} was removed: the ledger has its version ${lost.version}`,
    );
  }
}
