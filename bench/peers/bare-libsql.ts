// Limit: the rows of an outboxd commit written by a bare @libsql/client loop, with none of
// outboxd's HTTP, validation, auth or dispatch around it: how fast the storage path alone goes.
//
//   DURATION=10 npx bun bench/peers/bare-libsql.ts   → {"commitsPerSecond": n, …}
//
// Each commit is the five statements of NOTES.md: read the record's version, upsert the record,
// bump the aggregate's sequence, insert the event, insert its delivery. Commits are grouped
// GROUP (100) to a write transaction, each inside its own SAVEPOINT as a group commit must do to
// drop one bad commit without the others (SAVEPOINTS=0 leaves them out). The database is a temp
// `file:` one in WAL mode with synchronous=FULL, as durable as outboxd's default; the PRAGMAs
// are set on a `concurrency: 1` client, since a PRAGMA applies to one connection only.
// Env: DURATION (seconds, 10), GROUP (100), AGGREGATES (distinct aggregates cycled over, 1000),
// SAVEPOINTS (1).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";

const DURATION = Number(process.env.DURATION ?? 10);
const GROUP = Number(process.env.GROUP ?? 100);
const AGGREGATES = Number(process.env.AGGREGATES ?? 1000);
const SAVEPOINTS = (process.env.SAVEPOINTS ?? "1") !== "0";

const dir = mkdtempSync(join(tmpdir(), "outboxd-bench-libsql-"));
const client = createClient({ url: `file:${join(dir, "bench.db")}`, concurrency: 1 });
try {
  await client.execute("PRAGMA journal_mode=WAL");
  await client.execute("PRAGMA synchronous=FULL");
  await client.execute("PRAGMA busy_timeout=5000");
  await client.executeMultiple(`
    CREATE TABLE records (aggregate TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL,
      updated_at INTEGER NOT NULL);
    CREATE TABLE sequences (aggregate TEXT PRIMARY KEY, last INTEGER NOT NULL);
    CREATE TABLE events (id TEXT PRIMARY KEY, aggregate TEXT NOT NULL, sequence INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE UNIQUE INDEX events_aggregate_sequence ON events (aggregate, sequence);
    CREATE TABLE deliveries (event_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, status TEXT NOT NULL,
      next_attempt_at INTEGER NOT NULL, PRIMARY KEY (event_id, endpoint_id));
    CREATE INDEX deliveries_due ON deliveries (status, next_attempt_at);
  `);

  let commits = 0;
  const started = performance.now();
  const deadline = started + DURATION * 1000;
  while (performance.now() < deadline) {
    const tx = await client.transaction("write");
    try {
      for (let i = 0; i < GROUP; i++) {
        const aggregate = `agg-${commits % AGGREGATES}`;
        const now = Date.now();
        const data = JSON.stringify({ n: commits, note: "a bench commit" });
        if (SAVEPOINTS) await tx.execute("SAVEPOINT c");
        await tx.execute({ sql: "SELECT version FROM records WHERE aggregate = ?", args: [aggregate] });
        await tx.execute({
          sql: `INSERT INTO records (aggregate, version, data, updated_at) VALUES (?, 1, ?, ?)
                ON CONFLICT (aggregate) DO UPDATE SET version = version + 1, data = excluded.data,
                  updated_at = excluded.updated_at`,
          args: [aggregate, data, now],
        });
        const sequence = await tx.execute({
          sql: `INSERT INTO sequences (aggregate, last) VALUES (?, 1)
                ON CONFLICT (aggregate) DO UPDATE SET last = last + 1 RETURNING last`,
          args: [aggregate],
        });
        const id = crypto.randomUUID();
        await tx.execute({
          sql: "INSERT INTO events (id, aggregate, sequence, type, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
          args: [id, aggregate, Number(sequence.rows[0]?.last), "record.committed", data, now],
        });
        await tx.execute({
          sql: "INSERT INTO deliveries (event_id, endpoint_id, status, next_attempt_at) VALUES (?, ?, 'pending', ?)",
          args: [id, "endpoint-1", now],
        });
        if (SAVEPOINTS) await tx.execute("RELEASE c");
        commits++;
      }
      await tx.commit();
    } finally {
      tx.close();
    }
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      commitsPerSecond: Math.round(commits / seconds),
      commits,
      seconds: Number(seconds.toFixed(2)),
    }),
  );
} finally {
  client.close();
  rmSync(dir, { recursive: true, force: true });
}
