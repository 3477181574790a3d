// The ledger's start on a database from before it (DESIGN §13). Migration 0009 takes every
// record's current state over as its first version (commit_id null; since migration 0012 that
// version stays in the records row) and writes the genesis commit (seq 0) without a hash, since
// SQL has neither sha256 nor JCS; this seals it: the versions' digests and the genesis hash. A
// database without records gets no genesis commit.
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
  if (applied.length > 0) yield* sealGenesis();
  return applied;
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
