// Peer: `pg-boss` (v12) as the outbox. A commit is one PostgreSQL transaction (BEGIN, upsert
// the business row, pg-boss `send` of the webhook job on the same connection, COMMIT) behind a
// small node:http handler; a pg-boss worker fetches jobs in batches, POSTs each to the receiver
// and settles each job on its own outcome (completed, or failed and retried with backoff).
//
//   PORT=0 DATABASE_URL=postgres://… RECEIVER_URL=http://127.0.0.1:N/ node bench/peers/pgboss.mjs
//
// pg-boss 12 declares Node.js >= 22.12 (npm prints EBADENGINE on this machine's Node 20); what
// this file uses runs on Node 20, and it runs under Bun too (`npx bun bench/peers/pgboss.mjs`).
//
// Env: as pg-outbox.mjs: PORT (0 = pick one; prints {"listening": "http://127.0.0.1:N"}),
// DATABASE_URL, RECEIVER_URL, PUBLISHERS (worker loops = `localConcurrency`, 4), BATCH (jobs per
// fetch = `batchSize`, 20), POOL (pg pool for the commit path, 32; pg-boss keeps its own of
// BOSS_POOL, 10), PUBLISH (1 = run the worker, 0 = commit path alone), MAX_SECONDS (3600).
// Own knobs: POLL_SECONDS (worker's idle poll, 0.5 = the smallest pg-boss accepts; its default
// is 2), NOTIFY (1 = LISTEN/NOTIFY wake-ups: `useListenNotify` and a `notify` queue; every job
// insert then also issues a NOTIFY), ORDERED (1 = a `key_strict_fifo` queue keyed by aggregate,
// so an aggregate's jobs go out in order, one at a time, as outboxd does; 0 = a `standard`
// queue, which keeps no per-aggregate order: several workers hold jobs of one aggregate at once
// and a failed job is retried after its successors).
// HTTP: POST /commit {"aggregate", "data", "type"?} → 201 {"id"}; GET /stats → {"pending" (jobs
// not completed), "published" (completed), "failed" (of those pending, failed for good)};
// POST /prefill {"count", "aggregates"} → 200 {"inserted"}, via `boss.insert` in batches.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { PgBoss } from "pg-boss";
import { inTransaction, servePeer } from "./peer-http.mjs";

const env = process.env;
const PORT = Number(env.PORT ?? 0);
const DATABASE_URL = env.DATABASE_URL;
const RECEIVER_URL = env.RECEIVER_URL;
const PUBLISHERS = Number(env.PUBLISHERS ?? 4);
const BATCH = Number(env.BATCH ?? 20);
const POOL = Number(env.POOL ?? 32);
const BOSS_POOL = Number(env.BOSS_POOL ?? 10);
const PUBLISH = (env.PUBLISH ?? "1") !== "0";
const POLL_SECONDS = Number(env.POLL_SECONDS ?? 0.5);
const NOTIFY = env.NOTIFY === "1";
const ORDERED = env.ORDERED === "1";
const MAX_SECONDS = Number(env.MAX_SECONDS ?? 3600);

if (!DATABASE_URL) throw new Error("DATABASE_URL is required");
if (PUBLISH && !RECEIVER_URL) throw new Error("RECEIVER_URL is required when PUBLISH=1");

// A queue's policy is fixed when it is created, so each variant has its own queue.
const QUEUE = `webhooks${ORDERED ? "_fifo" : ""}${NOTIFY ? "_notify" : ""}`;

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: POOL });
pool.on("error", (error) => console.error("pg pool:", error.message));

const boss = new PgBoss({ connectionString: DATABASE_URL, max: BOSS_POOL, useListenNotify: NOTIFY });
boss.on("error", (error) => console.error("pg-boss:", error.message));
await boss.start();
// createQueue of an existing queue is a no-op, so a restarted peer keeps its jobs.
await boss.createQueue(QUEUE, {
  policy: ORDERED ? "key_strict_fifo" : "standard",
  notify: NOTIFY,
  // Keep trying like an outbox does, rather than pg-boss's default of 2 retries with no delay.
  retryLimit: 20,
  retryDelay: 1,
  retryBackoff: true,
  retryDelayMax: 60,
});

await pool.query(`
  CREATE TABLE IF NOT EXISTS records (
    aggregate  text PRIMARY KEY,
    version    bigint NOT NULL,
    data       jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`);

// ---- The commit path -------------------------------------------------------------------------

const UPSERT = `
  INSERT INTO records (aggregate, version, data) VALUES ($1, 1, $2)
  ON CONFLICT (aggregate) DO UPDATE
    SET version = records.version + 1, data = excluded.data, updated_at = now()
  RETURNING version`;

/** The job: the webhook body, and with ORDERED the aggregate as the FIFO key. */
function job(id, aggregate, type, payload) {
  return {
    data: { id, type, aggregate, payload },
    options: { id, ...(ORDERED ? { singletonKey: aggregate } : {}) },
  };
}

async function commit(aggregate, type, data) {
  const id = randomUUID();
  await inTransaction(pool, async (client) => {
    const { rows } = await client.query(UPSERT, [aggregate, JSON.stringify(data)]);
    const { data: body, options } = job(id, aggregate, type, { version: Number(rows[0].version), data });
    // pg-boss's documented way into an existing transaction: a `db` whose executeSql runs on
    // this transaction's connection, so the job commits (or rolls back) with the business row.
    await boss.send(QUEUE, body, {
      ...options,
      db: { executeSql: (text, values) => client.query(text, values) },
    });
  });
  return id;
}

async function prefill(count, aggregates) {
  const CHUNK = 1000;
  let inserted = 0;
  for (let start = 0; start < count; start += CHUNK) {
    const jobs = [];
    for (let n = start; n < Math.min(count, start + CHUNK); n++) {
      const { data, options } = job(randomUUID(), `agg-${n % aggregates}`, "record.committed", { n });
      jobs.push({ ...options, data });
    }
    await boss.insert(QUEUE, jobs);
    inserted += jobs.length;
  }
  return inserted;
}

async function stats() {
  const { rows } = await pool.query(
    `SELECT count(*) FILTER (WHERE state <> 'completed') AS pending,
            count(*) FILTER (WHERE state = 'completed') AS published,
            count(*) FILTER (WHERE state = 'failed') AS failed
     FROM pgboss.job WHERE name = $1`,
    [QUEUE],
  );
  return {
    pending: Number(rows[0].pending),
    published: Number(rows[0].published),
    failed: Number(rows[0].failed),
  };
}

// ---- The worker ------------------------------------------------------------------------------

async function send(body) {
  try {
    const response = await fetch(RECEIVER_URL, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

if (PUBLISH) {
  await boss.work(
    QUEUE,
    {
      batchSize: BATCH,
      localConcurrency: PUBLISHERS,
      pollingIntervalSeconds: POLL_SECONDS,
      burstWhenBatchFull: true,
      perJobResults: true,
    },
    async (jobs) => {
      const results = [];
      // One at a time, in fetch order, like the reference publisher.
      for (const { id, data } of jobs) {
        results.push({ id, status: (await send(data)) ? "completed" : "failed" });
      }
      return results;
    },
  );
}

const server = servePeer(PORT, { commit, stats, prefill });

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  await boss.stop({ graceful: true, timeout: 5000 }).catch(() => {});
  await pool.end().catch(() => {});
  process.exit(0);
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
setTimeout(shutdown, MAX_SECONDS * 1000).unref();
