// Operator commands that work on the database directly (the server may be running too: SQLite
// serialises the writes). Each prints what a script can rely on: results on stdout, progress
// and messages on stderr.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createToken, listTokens, revokeToken, type Scope } from "../auth/tokens.ts";
import { loadConfig } from "../config.ts";
import { migrate } from "../db/migrate.ts";
import { type Database, openDatabase } from "../db/open.ts";
import { countReplayable, replayDead } from "../dispatch/deliveries.ts";
import { prune } from "../dispatch/queries.ts";
import { parseDuration } from "../lib/duration.ts";
import { stats } from "../ops/stats.ts";
import { option, progress, UsageError } from "./args.ts";

async function withDatabase<T>(
  use: (db: Database, config: ReturnType<typeof loadConfig>) => Promise<T>,
): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    await db.writer.write(migrate());
    return await use(db, config);
  } finally {
    await db.close();
  }
}

const SCOPES: Scope[] = ["read", "commit", "admin"];

export async function tokenCommand(args: string[]): Promise<void> {
  const [sub] = args;
  if (sub === "create") {
    const name = option(args, "name");
    const scopes = (option(args, "scopes") ?? "").split(",").filter(Boolean);
    if (!name) throw new UsageError("--name is required");
    if (scopes.length === 0 || scopes.some((s) => !SCOPES.includes(s as Scope))) {
      throw new UsageError("--scopes must list read, commit and/or admin, comma-separated");
    }
    const { token, view } = await withDatabase((db) =>
      db.writer.write(createToken(name, [...new Set(scopes)] as Scope[], Date.now())),
    );
    console.error(`created ${view.id} (${view.scopes.join(",")}); the token is printed once, on stdout:`);
    console.log(token);
  } else if (sub === "list") {
    const tokens = await withDatabase((db) => db.driver.read(listTokens(500, undefined)));
    table(
      ["id", "name", "scopes", "created", "last used", "revoked"],
      tokens.map((t) => [
        t.id,
        t.name,
        t.scopes.join(","),
        t.createdAt,
        t.lastUsedAt ?? "-",
        t.revokedAt ?? "-",
      ]),
    );
  } else if (sub === "revoke") {
    const id = args[1];
    if (!id) throw new UsageError("usage: outboxd token revoke TOKEN_ID");
    const revoked = await withDatabase((db) => db.writer.write(revokeToken(id, Date.now())));
    if (!revoked) throw new UsageError(`token ${id} does not exist or is already revoked`);
    console.log(`revoked ${id}`);
  } else {
    throw new UsageError("usage: outboxd token create|list|revoke");
  }
}

export async function statsCommand(): Promise<void> {
  const current = await withDatabase((db) => db.driver.read(stats(Date.now())));
  const { endpoints, ...totals } = current;
  table(
    ["metric", "value"],
    Object.entries(totals).map(([k, v]) => [k, String(v)]),
  );
  if (endpoints.length > 0) {
    console.log("");
    table(
      ["endpoint", "pending", "inFlight", "due", "oldest s", "dead", "deadline", "delivered 1h"],
      endpoints.map((e) => [
        e.id,
        String(e.pending),
        String(e.inFlight),
        String(e.due),
        e.oldestPendingAgeSeconds.toFixed(1),
        String(e.dead),
        String(e.deadlineExceededTotal),
        String(e.deliveredLastHour),
      ]),
    );
  }
}

const REPLAY_CHUNK = 500;

export async function replayCommand(args: string[]): Promise<void> {
  if (option(args, "status") !== "dead")
    throw new UsageError(
      "usage: outboxd replay --status dead [--endpoint ID] [--reason R] [--since T] [--within 24h]",
    );
  const sinceText = option(args, "since");
  const since = sinceText === undefined ? undefined : Date.parse(sinceText);
  if (since !== undefined && Number.isNaN(since))
    throw new UsageError("--since must be a timestamp like 2026-11-29T10:00:00Z");
  const withinText = option(args, "within");
  const filter = { endpoint: option(args, "endpoint"), reason: option(args, "reason"), since };
  const replayed = await withDatabase(async (db, config) => {
    const within = withinText === undefined ? config.defaultDeliverWithinMs : parseDuration(withinText);
    if (within === null) throw new UsageError("--within must be a duration like 24h");
    const now = Date.now();
    const bar = progress("replaying", await db.driver.read(countReplayable(filter, now)));
    let done = 0;
    for (;;) {
      const n = await db.writer.write(replayDead(filter, now, now + within, REPLAY_CHUNK));
      done += n;
      bar.update(done);
      if (n < REPLAY_CHUNK) break;
    }
    bar.end(done);
    return done;
  });
  console.log(`replayed ${replayed}`);
}

export async function pruneCommand(): Promise<void> {
  const total = await withDatabase(async (db, config) => {
    const sum = { deliveries: 0, attempts: 0, commits: 0 };
    const before = Date.now() - config.retentionMs;
    for (;;) {
      const n = await db.writer.write(prune(before, 5000));
      sum.deliveries += n.deliveries;
      sum.attempts += n.attempts;
      sum.commits += n.commits;
      if (n.deliveries + n.attempts + n.commits === 0) return sum;
    }
  });
  console.log(
    `pruned ${total.deliveries} delivered deliveries, ${total.attempts} attempts, ${total.commits} commits`,
  );
}

export async function backupCommand(args: string[]): Promise<void> {
  const target = args[0];
  if (!target) throw new UsageError("usage: outboxd backup FILE");
  const path = resolve(target);
  if (existsSync(path)) throw new UsageError(`${path} exists; choose a new file`);
  await withDatabase((db) => db.driver.executeAlone("VACUUM INTO :path", { path }));
  console.log(`backup written to ${path}`);
}

function table(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  console.log(line(head));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const row of rows) console.log(line(row));
}
