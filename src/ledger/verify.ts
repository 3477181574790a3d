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
  /** JSON [[collection, id, version], ...]: the versions the commit wrote. */
  recordKeys: string | null;
  /** The pos of its last event (its events end there), or null (none, or not known: by commit id). */
  eventPos: number | null;
}

interface VersionRow {
  data: string | null;
  deleted: number;
  dataDigest: string | null;
  erasedAt: number | null;
  commitId: string | null;
  /** 1: the record's current version (its records row); 0: an earlier one (record_versions). */
  current: number;
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

const EVENT_COLUMNS = `id, type, aggregate, sequence, payload, payload_digest AS payloadDigest,
  deliver_after AS deliverAfter, deliver_by AS deliverBy, erased_at AS erasedAt`;
const CHAINED = "SELECT 1 FROM commits c WHERE c.id = x.commit_id AND c.seq IS NOT NULL";
// :genesisAt is null on a database created with the ledger: then no event is from before it.
const PRE_LEDGER = `x.payload_digest IS NULL AND NOT EXISTS (${CHAINED}) AND :genesisAt IS NOT NULL AND x.occurred_at <= :genesisAt
      AND x.pos < coalesce(:firstChained, x.pos + 1)`;

const SQL = {
  commits: `SELECT id, seq, token_id AS tokenId, proposal_id AS proposalId, created_at AS at, hash,
      record_count AS recordCount, event_count AS eventCount, record_keys AS recordKeys, event_pos AS eventPos
    FROM commits WHERE seq > :after ORDER BY seq LIMIT :limit`,
  // A version where it lives: the current one in records (a delete's 'null' there is no data),
  // earlier ones in record_versions.
  version: `SELECT CASE WHEN deleted = 1 AND data = 'null' THEN NULL ELSE data END AS data, deleted,
      data_digest AS dataDigest, NULL AS erasedAt, commit_id AS commitId, 1 AS current
    FROM records WHERE collection = :collection AND id = :id AND version = :version
    UNION ALL
    SELECT data, deleted, data_digest, erased_at, commit_id, 0 FROM record_versions
    WHERE collection = :collection AND id = :id AND version = :version`,
  currentVersion: "SELECT version FROM records WHERE collection = :collection AND id = :id",
  versionCount: "SELECT (SELECT count(*) FROM records) + (SELECT count(*) FROM record_versions) AS n",
  // A commit's events: the event_count positions ending at its event_pos, those that name it (an
  // event edited to name another commit, or moved, counts as removed).
  eventsAt: `SELECT ${EVENT_COLUMNS} FROM events WHERE pos > :from AND pos <= :to AND commit_id = :commitId
    ORDER BY pos`,
  // Without event_pos (a commit whose events the migration found apart): by commit id, a scan.
  eventsOf: `SELECT ${EVENT_COLUMNS} FROM events WHERE commit_id = :commitId ORDER BY pos`,
  // Rows that name a commit missing from the chain: what a removed commit row leaves behind.
  orphan: `SELECT min(commit_id) AS commitId FROM (
      SELECT commit_id FROM records x WHERE commit_id IS NOT NULL AND NOT EXISTS (${CHAINED})
      UNION ALL
      SELECT commit_id FROM record_versions x WHERE commit_id IS NOT NULL AND NOT EXISTS (${CHAINED})
      UNION ALL
      SELECT commit_id FROM events x WHERE payload_digest IS NOT NULL AND NOT EXISTS (${CHAINED}))`,
  // Events from before the ledger: only on a database upgraded from before it (it has the genesis
  // commit), without a digest, naming no chained commit, older than the genesis commit and placed
  // before every chained event.
  preLedger: `SELECT count(*) AS n FROM events x
    WHERE ${PRE_LEDGER}`,
  allEvents: `SELECT count(*) AS stored,
    (SELECT coalesce(sum(event_count), 0) FROM commits WHERE seq IS NOT NULL) AS listed FROM events`,
  firstChainedEvent: "SELECT min(pos) AS pos FROM events WHERE payload_digest IS NOT NULL",
  genesisAt: `SELECT created_at AS at FROM commits WHERE id = '${GENESIS_ID}' AND seq = 0`,
  // The first event neither among the events of the chained commit it names nor from before the
  // ledger (run only when the events do not add up).
  strayEvent: `SELECT x.id, c.id AS commitId FROM events x LEFT JOIN commits c ON c.id = x.commit_id AND c.seq IS NOT NULL
    WHERE NOT (${PRE_LEDGER}) AND (c.id IS NULL OR CASE
      WHEN c.event_pos IS NULL THEN coalesce(c.event_count, 0) = 0
      ELSE x.pos <= c.event_pos - c.event_count OR x.pos > c.event_pos END)
    ORDER BY x.pos LIMIT 1`,
  seqOf: "SELECT seq FROM commits WHERE id = :id",
  // A version no commit of the chain lists (run only when there are more versions than listed).
  strayVersion: `SELECT v.collection, v.id, v.version FROM (
      SELECT collection, id, version, commit_id FROM records
      UNION ALL
      SELECT collection, id, version, commit_id FROM record_versions) v
    WHERE NOT EXISTS (
      SELECT 1 FROM commits c, json_each(c.record_keys) k
      WHERE c.id = coalesce(v.commit_id, '${GENESIS_ID}') AND c.seq IS NOT NULL
        AND k.value ->> 0 = v.collection AND k.value ->> 1 = v.id AND k.value ->> 2 = v.version)
    LIMIT 1`,
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

/** An erased payload is JSON null and nothing else (the dispatcher would send anything else). */
function isJsonNull(json: string): boolean {
  try {
    return JSON.parse(json) === null;
  } catch {
    return false;
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
    const unchained = yield* checkEvents();
    const stored = (yield* get<{ n: number }>(SQL.versionCount))?.n ?? 0;
    if (stored !== head.versions) {
      const stray = yield* get<{ collection: string; id: string; version: number }>(SQL.strayVersion);
      throw new Mismatch(
        null,
        null,
        stray
          ? `version ${stray.version} of ${stray.collection}/${stray.id} was written outside any commit of the chain`
          : `${stored} record versions are stored, the chain lists ${head.versions}`,
      );
    }
    return {
      ok: true,
      commits: head.commits,
      head: head.hash,
      unchainedEvents: unchained,
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

/**
 * Every event row is one its chained commit lists (each commit's were counted in the chain) or,
 * on a database upgraded from before the ledger, one from before it. Returns how many are.
 */
function* checkEvents(): Op<number> {
  const genesisAt = (yield* get<{ at: number }>(SQL.genesisAt))?.at ?? null;
  const firstChained = (yield* get<{ pos: number | null }>(SQL.firstChainedEvent))?.pos ?? null;
  const bounds = { genesisAt, firstChained };
  const preLedger = (yield* get<{ n: number }>(SQL.preLedger, bounds))?.n ?? 0;
  const events = yield* get<{ stored: number; listed: number }>(SQL.allEvents);
  if (!events || events.stored === events.listed + preLedger) return preLedger;
  const stray = yield* get<{ id: string; commitId: string | null }>(SQL.strayEvent, bounds);
  if (!stray) {
    throw new Mismatch(
      null,
      null,
      `${events.stored} events are stored, the chain lists ${events.listed} and ${preLedger} are from before it`,
    );
  }
  throw new Mismatch(
    stray.commitId,
    null,
    stray.commitId === null
      ? `event ${stray.id} was added outside any commit of the chain`
      : `event ${stray.id} was added: it names this commit, which did not insert it`,
  );
}

function* verifyChain(erased: {
  versions: number;
  events: number;
}): Op<{ commits: number; hash: string; versions: number }> {
  let previous = ZERO_HASH;
  let expected = 0;
  let versions = 0;
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
      const records = yield* commitVersions(commit, fail, erased);
      versions += records.length;
      const eventRows = yield* commitEvents(commit);
      const events: ChainEvent[] = eventRows.map((e) => {
        if (e.payloadDigest === null) throw fail(`event ${e.id} was edited: its digest is missing`);
        if (e.erasedAt !== null) {
          if (!isJsonNull(e.payload)) {
            throw fail(`event ${e.id} was edited: it is marked erased, but its payload is not null`);
          }
          erased.events++;
        } else if (digestOrNull(e.payload) !== e.payloadDigest) {
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
  return { commits: expected, hash: previous, versions };
}

/** The events a commit inserted: by position (commits.event_pos), else by commit id. */
function* commitEvents(commit: CommitRow): Op<EventRow[]> {
  if (commit.id === GENESIS_ID || commit.eventCount === 0) return [];
  if (commit.eventPos === null || commit.eventCount === null) {
    return yield* all<EventRow>(SQL.eventsOf, { commitId: commit.id });
  }
  return yield* all<EventRow>(SQL.eventsAt, {
    from: commit.eventPos - commit.eventCount,
    to: commit.eventPos,
    commitId: commit.id,
  });
}

/**
 * The versions a commit lists (commits.record_keys), each found where it lives and checked
 * against its digest: a current version in its records row, an earlier one in record_versions.
 */
function* commitVersions(
  commit: CommitRow,
  fail: (problem: string) => Mismatch,
  erased: { versions: number },
): Op<ChainRecord[]> {
  let keys: [string, string, number][];
  try {
    keys = JSON.parse(commit.recordKeys ?? "[]");
  } catch {
    throw fail("the commit's list of versions was edited: it is not JSON");
  }
  if (commit.recordCount !== null && keys.length !== commit.recordCount) {
    throw fail(countProblem("version", commit.recordCount, keys.length));
  }
  const records: ChainRecord[] = [];
  for (const [collection, id, version] of keys) {
    const name = `${collection}/${id}`;
    const key = `version ${version} of ${name}`;
    const v = yield* get<VersionRow>(SQL.version, { collection, id, version });
    if (!v) {
      const current = yield* get<{ version: number }>(SQL.currentVersion, { collection, id });
      throw fail(
        current && current.version < version
          ? `record ${name} was edited: its current state (version ${current.version}) is older than the ledger's (version ${version})`
          : current && current.version > version
            ? `${key} was removed`
            : current
              ? `record ${name} was edited: its version was changed`
              : `record ${name} was removed: the ledger has its ${key}`,
      );
    }
    if (v.commitId !== (commit.id === GENESIS_ID ? null : commit.id)) {
      throw fail(`${key} was edited: it names another commit (${v.commitId ?? "none"})`);
    }
    // The current version's data is the record's: say so, it is what a reader sees.
    const edited =
      v.current === 1 ? `record ${name} was edited (${key}, its current state)` : `${key} was edited`;
    if (v.deleted === 1) {
      if (v.data !== null || v.dataDigest !== null) throw fail(`${edited}: a delete carries no data`);
    } else if (v.data === null) {
      if (v.erasedAt === null) throw fail(`${edited}: its data is missing and it was not erased`);
      erased.versions++;
    } else if (digestOrNull(v.data) !== v.dataDigest) {
      throw fail(`${edited}: its data no longer matches its digest`);
    }
    records.push({ collection, id, version, deleted: v.deleted === 1, dataDigest: v.dataDigest });
  }
  return records;
}

function countProblem(what: "version" | "event", recorded: number, found: number): string {
  const difference = recorded - found;
  return difference > 0
    ? `${difference} ${what}${difference === 1 ? " was" : "s were"} removed (${recorded} committed, ${found} found)`
    : `${-difference} ${what}${difference === -1 ? " was" : "s were"} added (${recorded} committed, ${found} found)`;
}
