// The ledger's start on a database from before it (DESIGN §13). Migration 0009 takes every
// record's current state over as its first version (commit_id null; since migration 0012 that
// version stays in the records row) and writes the genesis commit (seq 0) without a hash, since
// SQL has neither sha256 nor JCS; this seals it: the versions' digests and the genesis hash. A
// database holding neither records nor events gets no genesis commit: its first commit is seq 0.
import { migrate } from "../db/migrate.ts";
import type { EmbeddedMigration } from "../db/migrations.gen.ts";
import { all, get, type Op, run } from "../db/op.ts";
import { recordKeys } from "./append.ts";
import { type ChainRecord, chainHash, digestOf, GENESIS_ID, ZERO_HASH } from "./chain.ts";

/**
 * The migrations every entry point runs (serve, migrate, the operator commands): the embedded
 * migrations, then the sealing of a genesis commit the ledger migration has just written.
 */
export function* migrateDatabase(migrations?: EmbeddedMigration[]): Op<string[]> {
  const applied = yield* migrate(migrations);
  if (applied.includes(LEDGER_MIGRATION)) yield* genesisForEvents();
  if (applied.length > 0) yield* sealGenesis();
  return applied;
}

const LEDGER_MIGRATION = "0009_ledger";

/**
 * A database upgraded holding events but no records gets the genesis commit too (listing no
 * versions): it marks the database as one from before the ledger, whose older events `outboxd
 * verify` counts as unchained. Run right after the ledger migration, before any chained commit.
 */
function* genesisForEvents(): Op<void> {
  yield* run(
    `INSERT INTO commits (id, token_id, created_at, seq, hash, record_count, event_count)
     SELECT :id, NULL, 0, 0, NULL, 0, 0
     WHERE EXISTS (SELECT 1 FROM events) AND NOT EXISTS (SELECT 1 FROM commits WHERE seq IS NOT NULL)`,
    { id: GENESIS_ID },
  );
}

export function* sealGenesis(now: number = Date.now()): Op<void> {
  // A database migrated only part of the way (tests of older schemas) has no ledger yet.
  const ledger = yield* get("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'record_versions'");
  if (!ledger) return;
  const genesis = yield* get<{ hash: string | null }>("SELECT hash FROM commits WHERE id = :id", {
    id: GENESIS_ID,
  });
  if (!genesis || genesis.hash !== null) return;
  // The versions taken over: current ones in records, any earlier ones in record_versions.
  const versions = yield* all<{
    place: "records" | "versions";
    pos: number;
    collection: string;
    id: string;
    version: number;
    data: string | null;
    deleted: number;
  }>(
    `SELECT 'records' AS place, 0 AS pos, collection, id, version, data, deleted FROM records WHERE commit_id IS NULL
     UNION ALL
     SELECT 'versions', pos, collection, id, version, data, deleted FROM record_versions WHERE commit_id IS NULL`,
  );
  const records: ChainRecord[] = [];
  for (const v of versions) {
    const dataDigest = v.deleted === 1 || v.data === null ? null : digestOf(v.data);
    if (dataDigest !== null) {
      yield* run(
        v.place === "records"
          ? "UPDATE records SET data_digest = :dataDigest WHERE collection = :collection AND id = :id"
          : "UPDATE record_versions SET data_digest = :dataDigest WHERE pos = :pos",
        { dataDigest, pos: v.pos, collection: v.collection, id: v.id },
      );
    }
    records.push({
      collection: v.collection,
      id: v.id,
      version: v.version,
      deleted: v.deleted === 1,
      dataDigest,
    });
  }
  const hash = chainHash(ZERO_HASH, {
    seq: 0,
    commitId: GENESIS_ID,
    tokenId: null,
    proposalId: null,
    at: now,
    records,
    events: [],
  });
  yield* run("UPDATE commits SET hash = :hash, created_at = :now, record_keys = :keys WHERE id = :id", {
    hash,
    now,
    keys: recordKeys(records),
    id: GENESIS_ID,
  });
}
