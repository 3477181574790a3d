// Applies the migrations embedded in the program (src/db/migrations.gen.ts), in one write
// transaction, recording each in drizzle's own bookkeeping table so drizzle-kit agrees.
import { type EmbeddedMigration, migrations as embedded } from "./migrations.gen.ts";
import { all, type Op, run } from "./op.ts";

export function* migrate(migrations: EmbeddedMigration[] = embedded): Op<string[]> {
  yield* run(
    "CREATE TABLE IF NOT EXISTS __drizzle_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, hash text NOT NULL, created_at numeric)",
  );
  const applied = yield* appliedMigrations();
  const done: string[] = [];
  for (const migration of migrations) {
    if (applied(migration)) continue;
    for (const statement of migration.statements) yield* run(statement);
    yield* run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES (:hash, :when)", {
      hash: migration.hash,
      when: migration.when,
    });
    done.push(migration.tag);
  }
  return done;
}

/** The migrations not yet applied (for /readyz). */
export function* pendingMigrations(migrations: EmbeddedMigration[] = embedded): Op<string[]> {
  const table = yield* all(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'",
  );
  if (table.length === 0) return migrations.map((m) => m.tag);
  const applied = yield* appliedMigrations();
  return migrations.filter((m) => !applied(m)).map((m) => m.tag);
}

/**
 * A migration counts as applied when its hash or its journal time (`when`, drizzle's own rule) is
 * recorded: a migration whose SQL was corrected after release (0009's statement that a libSQL
 * server's parser refused) has a new hash, and a database that applied the first text must not
 * apply it again.
 */
function* appliedMigrations(): Op<(migration: EmbeddedMigration) => boolean> {
  const rows = yield* all<{ hash: string; created_at: number | string | null }>(
    "SELECT hash, created_at FROM __drizzle_migrations",
  );
  const hashes = new Set(rows.map((r) => r.hash));
  const times = new Set(rows.map((r) => Number(r.created_at)));
  return (migration) => hashes.has(migration.hash) || times.has(migration.when);
}
