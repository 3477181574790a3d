// Applies the migrations embedded in the program (src/db/migrations.gen.ts), in one write
// transaction, recording each in drizzle's own bookkeeping table so drizzle-kit agrees.
import { type EmbeddedMigration, migrations as embedded } from "./migrations.gen.ts";
import { all, type Op, run } from "./op.ts";

export function* migrate(migrations: EmbeddedMigration[] = embedded): Op<string[]> {
  yield* run(
    "CREATE TABLE IF NOT EXISTS __drizzle_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, hash text NOT NULL, created_at numeric)",
  );
  const applied = new Set(
    (yield* all<{ hash: string }>("SELECT hash FROM __drizzle_migrations")).map((r) => r.hash),
  );
  const done: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.hash)) continue;
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
  const applied = new Set(
    (yield* all<{ hash: string }>("SELECT hash FROM __drizzle_migrations")).map((r) => r.hash),
  );
  return migrations.filter((m) => !applied.has(m.hash)).map((m) => m.tag);
}
