// Operator commands that work on the database directly (the server may be running too: SQLite
// serialises the writes). Each prints what a script can rely on: results on stdout, progress
// and messages on stderr.
import { existsSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { createToken, listTokens, revokeToken, SCOPES, type Scope } from "../auth/tokens.ts";
import { createPrivateFile } from "../db/private-files.ts";
import { deadlineWithin } from "../deliveries/deadline.ts";
import { countReplayable, replayAllDead } from "../deliveries/replay.ts";
import { pruneAll } from "../deliveries/retention.ts";
import { getEndpoint, resealAllSecrets } from "../endpoints/endpoints.ts";
import { SecretBox } from "../endpoints/secrets.ts";
import { stats } from "../ops/stats.ts";
import { option, progress, UsageError } from "./args.ts";
import { withDatabase } from "./database.ts";

export async function tokenCommand(args: string[]): Promise<void> {
  const [sub] = args;
  if (sub === "create") {
    const name = option(args, "name");
    const scopes = (option(args, "scopes") ?? "").split(",").filter(Boolean);
    if (!name) throw new UsageError("--name is required");
    if (scopes.length === 0 || scopes.some((s) => !(SCOPES as readonly string[]).includes(s))) {
      throw new UsageError(`--scopes must list some of ${SCOPES.join(", ")}, comma-separated`);
    }
    const { token, view } = await withDatabase(
      (db) => db.writer.write(createToken(name, [...new Set(scopes)] as Scope[], Date.now())),
      { create: true },
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
      ["endpoint", "kind", "pending", "inFlight", "due", "oldest s", "dead", "deadline", "delivered 1h"],
      endpoints.map((e) => [
        e.id,
        e.kind ?? "deleted",
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
    if (filter.endpoint !== undefined && !(await db.driver.read(getEndpoint(filter.endpoint)))) {
      throw new UsageError(`no endpoint ${filter.endpoint}; outboxd stats lists them`);
    }
    const now = Date.now();
    let deliverBy = now + config.defaultDeliverWithinMs;
    if (withinText !== undefined) {
      // The same rule as the API's deliverWithin: no zero, negative or uncountable window.
      const deadline = deadlineWithin(now, withinText);
      if (!deadline.ok) throw new UsageError(`--within ${deadline.detail}, like 24h`);
      deliverBy = deadline.deliverBy;
    }
    const bar = progress("replaying", await db.driver.read(countReplayable(filter, now)));
    const done = await replayAllDead(
      db,
      { filter, now, deliverBy },
      { onChunk: (total) => bar.update(total.replayed ?? 0) },
    );
    bar.end(done);
    return done;
  });
  console.log(`replayed ${replayed}`);
}

export async function pruneCommand(): Promise<void> {
  const total = await withDatabase((db, config) => {
    const now = Date.now();
    return pruneAll(db, { before: now - config.retentionMs, now });
  });
  console.log(
    `pruned ${total.deliveries} delivered deliveries, ${total.attempts} attempts, ${total.idempotencyKeys} idempotency responses`,
  );
}

export async function backupCommand(args: string[]): Promise<void> {
  const target = args[0];
  if (!target) throw new UsageError("usage: outboxd backup FILE");
  const path = resolve(target);
  if (existsSync(path)) throw new UsageError(`${path} exists; choose a new file`);
  await withDatabase(async (db) => {
    // VACUUM INTO fills an empty file as it is: created first, it keeps mode 0600.
    createPrivateFile(path);
    try {
      await db.driver.executeAlone("VACUUM INTO :path", { path });
    } catch (error) {
      rmSync(path, { force: true });
      throw error;
    }
  });
  console.log(`backup written to ${path}`);
}

/**
 * `rotate-master-key`: re-seals every endpoint's signing secrets, opened with
 * OUTBOXD_MASTER_KEY (or stored plain when it is unset), with OUTBOXD_NEW_MASTER_KEY; with
 * `--decrypt`, stores them plain. One transaction: on any error nothing changes.
 */
export async function rotateMasterKeyCommand(args: string[]): Promise<void> {
  const decrypt = args.includes("--decrypt");
  const unknown = args.filter((a) => a !== "--decrypt");
  if (unknown.length > 0) throw new UsageError("usage: outboxd rotate-master-key [--decrypt]");
  const next = process.env.OUTBOXD_NEW_MASTER_KEY?.trim() || undefined;
  if (decrypt && next !== undefined) {
    throw new UsageError("--decrypt stores the secrets unencrypted: leave OUTBOXD_NEW_MASTER_KEY unset");
  }
  if (!decrypt && next === undefined) {
    throw new UsageError(
      "set OUTBOXD_NEW_MASTER_KEY to the new key (openssl rand -base64 32), or pass --decrypt",
    );
  }
  if (next !== undefined && Buffer.from(next, "base64").length !== 32) {
    throw new UsageError(
      "OUTBOXD_NEW_MASTER_KEY must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)",
    );
  }
  const count = await withDatabase(async (db, config) => {
    if (decrypt && config.masterKey === undefined) {
      throw new UsageError("--decrypt needs OUTBOXD_MASTER_KEY: the key the secrets are sealed with");
    }
    if (next !== undefined && next === config.masterKey) {
      throw new UsageError("OUTBOXD_NEW_MASTER_KEY is the same as OUTBOXD_MASTER_KEY");
    }
    const from = new SecretBox(config.masterKey);
    const to = new SecretBox(next);
    const resealed = await db.writer.write(
      resealAllSecrets((sealed, id) => {
        try {
          return to.seal(from.open(sealed));
        } catch {
          // The cause names no secret, but says nothing useful either: say what to check.
          throw new UsageError(
            `the secrets of endpoint ${id} cannot be opened with ${config.masterKey === undefined ? "no OUTBOXD_MASTER_KEY" : "this OUTBOXD_MASTER_KEY"} (sealed with another key?); nothing was changed`,
          );
        }
      }),
    );
    // The old ciphertext (or plain text) would otherwise survive in free pages and the WAL.
    await db.driver.executeAlone("VACUUM");
    await db.driver.executeAlone("PRAGMA wal_checkpoint(TRUNCATE)");
    return resealed;
  });
  console.error(
    decrypt
      ? "endpoint secrets are now stored unencrypted; start outboxd without OUTBOXD_MASTER_KEY"
      : "start outboxd with OUTBOXD_MASTER_KEY set to the new key",
  );
  console.log(`re-sealed ${count} endpoints`);
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
