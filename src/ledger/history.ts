// Reads of the ledger (DESIGN §13): a record's versions, newest first, and the chain itself.
import { all, get, type Op } from "../db/op.ts";
import { iso } from "../lib/time.ts";
import { ZERO_HASH } from "./chain.ts";

interface VersionRow {
  version: number;
  data: string | null;
  deleted: number;
  commitId: string | null;
  at: number;
  erasedAt: number | null;
  tokenId: string | null;
  tokenName: string | null;
  proposalId: string | null;
  /** The commit's events: the eventCount positions ending at eventPos (commits.event_pos). */
  eventPos: number | null;
  eventCount: number | null;
}

export interface VersionView {
  version: number;
  /** null when deleted or erased. */
  data: unknown;
  deleted: boolean;
  /** outboxd extension: the data was erased (docs/ledger.md); its digest stays in the chain. */
  erased: boolean;
  /** null for the versions the ledger migration took over from an older database. */
  commitId: string | null;
  committedBy: { tokenId: string; tokenName: string | null } | null;
  /** outboxd extension: the proposal the commit applied, if any. */
  proposalId: string | null;
  at: string;
  events: { id: string; type: string; aggregate: string; sequence: number }[];
}

const SQL = {
  // The current version (the records row) and the earlier ones (record_versions), newest first.
  versions: `SELECT v.version, v.data, v.deleted, v.commit_id AS commitId, v.at, v.erased_at AS erasedAt,
      c.token_id AS tokenId, c.token_name AS tokenName, c.proposal_id AS proposalId, c.event_pos AS eventPos,
      c.event_count AS eventCount
    FROM (
      SELECT version, CASE WHEN deleted = 1 THEN NULL ELSE data END AS data, deleted, commit_id, updated_at AS at,
        NULL AS erased_at
      FROM records WHERE collection = :collection AND id = :id AND version < :before
      UNION ALL
      SELECT * FROM (
        SELECT version, data, deleted, commit_id, at, erased_at FROM record_versions
        WHERE collection = :collection AND id = :id AND version < :before ORDER BY version DESC LIMIT :limit)
    ) v LEFT JOIN commits c ON c.id = v.commit_id
    ORDER BY v.version DESC LIMIT :limit`,
  eventsAt: `SELECT id, type, aggregate, sequence FROM events
    WHERE pos > :from AND pos <= :to AND commit_id = :commitId ORDER BY pos`,
  // A commit without event_pos (none in a chain written since migration 0013): a scan.
  eventsOfCommit: "SELECT id, type, aggregate, sequence FROM events WHERE commit_id = :commitId ORDER BY pos",
  head: `SELECT seq, id AS commitId, hash, created_at AS at FROM commits
    WHERE seq = (SELECT max(seq) FROM commits)`,
  chain: `SELECT seq, id AS commitId, hash, created_at AS at FROM commits
    WHERE seq >= :from ORDER BY seq LIMIT :limit`,
};

/** Versions older than `before` (exclusive; the cursor is the last version of the previous page). */
export function* recordHistory(
  collection: string,
  id: string,
  limit: number,
  before: number | undefined,
): Op<VersionView[]> {
  const rows = yield* all<VersionRow>(SQL.versions, {
    collection,
    id,
    before: before ?? Number.MAX_SAFE_INTEGER,
    limit,
  });
  const versions: VersionView[] = [];
  for (const row of rows) {
    const events = yield* commitEvents(row);
    versions.push({
      version: row.version,
      data: row.data === null ? null : JSON.parse(row.data),
      deleted: row.deleted === 1,
      erased: row.erasedAt !== null,
      commitId: row.commitId,
      committedBy: row.tokenId === null ? null : { tokenId: row.tokenId, tokenName: row.tokenName },
      proposalId: row.proposalId,
      at: iso(row.at),
      events,
    });
  }
  return versions;
}

function* commitEvents(row: VersionRow): Op<VersionView["events"]> {
  if (row.commitId === null || row.eventCount === 0) return [];
  if (row.eventPos === null || row.eventCount === null) {
    return yield* all<VersionView["events"][number]>(SQL.eventsOfCommit, { commitId: row.commitId });
  }
  return yield* all<VersionView["events"][number]>(SQL.eventsAt, {
    from: row.eventPos - row.eventCount,
    to: row.eventPos,
    commitId: row.commitId,
  });
}

export interface ChainLink {
  seq: number;
  commitId: string;
  hash: string;
  previousHash: string;
  at: string;
}

interface ChainRow {
  seq: number;
  commitId: string;
  hash: string | null;
  at: number;
}

/** GET /v1/ledger: the number of commits in the chain (genesis included) and its head. */
export function* ledgerHead(): Op<{
  commits: number;
  head: { seq: number; commitId: string; hash: string; at: string } | null;
}> {
  const head = yield* get<ChainRow>(SQL.head);
  if (!head) return { commits: 0, head: null };
  return {
    commits: head.seq + 1,
    head: { seq: head.seq, commitId: head.commitId, hash: head.hash ?? "", at: iso(head.at) },
  };
}

/** Chain entries after seq `after` (all from genesis when undefined), ascending. */
export function* chainLinks(limit: number, after: number | undefined): Op<ChainLink[]> {
  // One row more at the start: the previous hash of the first entry of the page.
  const from = after ?? -1;
  const rows = yield* all<ChainRow>(SQL.chain, { from, limit: limit + 1 });
  const links: ChainLink[] = [];
  let previous = rows[0]?.seq === from ? rows.shift() : undefined;
  for (const row of rows.slice(0, limit)) {
    links.push({
      seq: row.seq,
      commitId: row.commitId,
      hash: row.hash ?? "",
      previousHash: previous?.hash ?? ZERO_HASH,
      at: iso(row.at),
    });
    previous = row;
  }
  return links;
}

/** The hash at a seq of the chain (an anchor check), or undefined when the chain is shorter. */
export function* hashAt(seq: number): Op<string | undefined> {
  const row = yield* get<{ hash: string | null }>("SELECT hash FROM commits WHERE seq = :seq", { seq });
  return row?.hash ?? undefined;
}
