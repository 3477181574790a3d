// Opening the database and applying its migrations, begun before the rest of the program is loaded.
// `outboxd serve` and `outboxd dispatch` start this first (src/main.ts), then load the HTTP app,
// the dispatcher and the rest: the writer thread starts, opens the file and migrates on the second
// core while this one evaluates its modules, instead of after it. createOutboxd (src/app.ts) awaits the same two promises before
// anything can write, so readiness keeps its meaning (/readyz answers 200 only once a commit would succeed).
// Light on purpose: only the database's modules, never the app's.
import type { Config } from "./config.ts";
import { type Database, openDatabase, type WriterPlacement } from "./db/open.ts";
import { enableFailpoints } from "./failpoints.ts";
import { migrateWrite } from "./ledger/writes.ts";

export interface Opening {
  db: Promise<Database>;
  /** The migrations applied (their tags); settles after `db`. */
  migrations: Promise<string[]>;
}

/** `placement`: a local file's writer on a thread of its own unless told `here` (db/open.ts). */
export function beginOpening(config: Config, placement: WriterPlacement = "thread"): Opening {
  // The crash drills may stop the process in the migrations too.
  enableFailpoints(config.failpoints);
  const db = openDatabase(config, placement);
  const migrations = db.then((opened) => opened.write(migrateWrite()));
  // Awaited later by createOutboxd, which reports a failure; until then it is not unhandled.
  migrations.catch(() => {});
  return { db, migrations };
}
