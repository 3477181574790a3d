// The operator commands' database: opened on this thread, migrated, closed after use. Only
// `serve`, `migrate` and `token create` may create one; every other command refuses a path (or a
// remote URL) where there is no outboxd database, so a typo in OUTBOXD_DATABASE_URL or the
// wrong directory is an error instead of an empty outbox that reports "ok" and zeros.
import { existsSync } from "node:fs";
import { type Config, loadConfig } from "../config.ts";
import { get, type Op } from "../db/op.ts";
import { type Database, openDatabase } from "../db/open.ts";
import { localPath } from "../db/sqlite.ts";
import { migrateDatabase } from "../ledger/genesis.ts";
import { UsageError } from "./args.ts";

/** The database's place for a message: the file's path, or a remote URL without credentials. */
function where(databaseUrl: string): string {
  const file = localPath(databaseUrl);
  if (file) return file;
  try {
    const url = new URL(databaseUrl);
    return `${url.protocol}//${url.host}${url.pathname === "/" ? "" : url.pathname}`;
  } catch {
    return "OUTBOXD_DATABASE_URL";
  }
}

function noDatabase(config: Config): UsageError {
  return new UsageError(
    `no outboxd database at ${where(config.databaseUrl)}: set OUTBOXD_DATABASE_URL to yours, or create one with outboxd migrate (or serve)`,
  );
}

/** Opens the configured database, which must already be an outboxd database (else UsageError). */
export async function openExisting(config: Config): Promise<Database> {
  const file = localPath(config.databaseUrl);
  if (file && !existsSync(file)) throw noDatabase(config);
  const db = await openDatabase(config);
  try {
    if (!(await db.driver.read(hasMigrations()))) throw noDatabase(config);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** Whether outboxd's migrations were ever applied here. */
function* hasMigrations(): Op<boolean> {
  return (
    (yield* get(
      "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'",
    )) !== undefined
  );
}

/**
 * Runs `use` on the configured database, brought up to date first. `create`: the database may be
 * created here (`token create`); otherwise it must exist.
 */
export async function withDatabase<T>(
  use: (db: Database, config: Config) => Promise<T>,
  options: { create?: boolean } = {},
): Promise<T> {
  const config = loadConfig();
  const db = options.create ? await openDatabase(config) : await openExisting(config);
  try {
    await db.writer.write(migrateDatabase());
    return await use(db, config);
  } finally {
    await db.close();
  }
}

/** Throws UsageError when the configured database is not an outboxd database (`dispatch`). */
export async function requireDatabase(config: Config): Promise<void> {
  await (await openExisting(config)).close();
}
