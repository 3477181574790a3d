// Peer: the reference transactional outbox that users build by hand: Node.js + `pg` + PostgreSQL.
// A commit is one PostgreSQL transaction (BEGIN, upsert the business row, insert the outbox row,
// COMMIT) behind a small node:http handler; publisher loops claim pending rows with
// FOR UPDATE SKIP LOCKED in batches, POST each to the receiver, mark them published and COMMIT.
//
//   PORT=0 DATABASE_URL=postgres://… RECEIVER_URL=http://127.0.0.1:N/ node bench/peers/pg-outbox.mjs
//
// Env: PORT (0 = pick one; prints {"listening": "http://127.0.0.1:N"}), DATABASE_URL,
// RECEIVER_URL, PUBLISHERS (publisher loops, 4), BATCH (rows per claim, 20), POOL (pg pool
// size, 32), PUBLISH (1 = run the publisher, 0 = commit path alone), POLL_MS (sleep when
// nothing is pending, 50), MAX_SECONDS (exits by itself after this long, 3600).
// HTTP: POST /commit {"aggregate", "data", "type"?} → 201 {"id"}; GET /stats → {"pending",
// "published"}; POST /prefill {"count", "aggregates"} → 200 {"inserted"} once the rows are in.
//
// ORDER: this design does NOT keep per-aggregate order. Each loop claims the oldest unlocked
// rows, but rows of one aggregate can land in two loops' batches, and a failed send puts a row
// back for later while its successors go out. outboxd delivers an aggregate's events in order
// (one in flight per aggregate); the report has to say that this peer promises less.
//
// Delivery is at least once: the claimed rows stay locked while they are sent, so a publisher
// that dies mid-batch rolls back and the rows are sent again by another loop.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { inTransaction, servePeer } from "./peer-http.mjs";

const env = process.env;
const PORT = Number(env.PORT ?? 0);
const DATABASE_URL = env.DATABASE_URL;
const RECEIVER_URL = env.RECEIVER_URL;
const PUBLISHERS = Number(env.PUBLISHERS ?? 4);
const BATCH = Number(env.BATCH ?? 20);
const POOL = Number(env.POOL ?? 32);
const PUBLISH = (env.PUBLISH ?? "1") !== "0";
const POLL_MS = Number(env.POLL_MS ?? 50);
const MAX_SECONDS = Number(env.MAX_SECONDS ?? 3600);

if (!DATABASE_URL) throw new Error("DATABASE_URL is required");
if (PUBLISH && !RECEIVER_URL) throw new Error("RECEIVER_URL is required when PUBLISH=1");

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: POOL });
pool.on("error", (error) => console.error("pg pool:", error.message));

// The business table (one row per aggregate, versioned) and the outbox. `seq` gives the claim
// query a creation order that random UUIDs do not have; the partial index covers exactly the
// rows the publisher looks for.
await pool.query(`
  CREATE TABLE IF NOT EXISTS records (
    aggregate  text PRIMARY KEY,
    version    bigint NOT NULL,
    data       jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE IF NOT EXISTS outbox (
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    id              uuid PRIMARY KEY,
    aggregate       text NOT NULL,
    type            text NOT NULL,
    payload         jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    published_at    timestamptz
  );
  CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (seq) WHERE status = 'pending';
`);

// ---- The commit path -------------------------------------------------------------------------

const UPSERT = `
  INSERT INTO records (aggregate, version, data) VALUES ($1, 1, $2)
  ON CONFLICT (aggregate) DO UPDATE
    SET version = records.version + 1, data = excluded.data, updated_at = now()
  RETURNING version`;
const INSERT_OUTBOX = "INSERT INTO outbox (id, aggregate, type, payload) VALUES ($1, $2, $3, $4)";

async function commit(aggregate, type, data) {
  const id = randomUUID();
  await inTransaction(pool, async (client) => {
    const { rows } = await client.query(UPSERT, [aggregate, JSON.stringify(data)]);
    const payload = { version: Number(rows[0].version), data };
    await client.query(INSERT_OUTBOX, [id, aggregate, type, JSON.stringify(payload)]);
  });
  return id;
}

async function prefill(count, aggregates) {
  const { rowCount } = await pool.query(
    `INSERT INTO outbox (id, aggregate, type, payload)
     SELECT gen_random_uuid(), 'agg-' || (g % $2), 'record.committed', jsonb_build_object('n', g)
     FROM generate_series(1, $1::int) AS g`,
    [count, aggregates],
  );
  return rowCount;
}

async function stats() {
  const { rows } = await pool.query(
    `SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
            count(*) FILTER (WHERE status = 'published') AS published
     FROM outbox`,
  );
  return { pending: Number(rows[0].pending), published: Number(rows[0].published) };
}

// ---- The publisher ---------------------------------------------------------------------------

const CLAIM = `
  SELECT id, aggregate, type, payload FROM outbox
  WHERE status = 'pending' AND next_attempt_at <= now()
  ORDER BY seq
  LIMIT $1
  FOR UPDATE SKIP LOCKED`;

let running = true;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function send(row) {
  try {
    const response = await fetch(RECEIVER_URL, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: row.id, type: row.type, aggregate: row.aggregate, payload: row.payload }),
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/** One claim-send-mark round; returns how many rows it claimed. */
async function publishOnce() {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query(CLAIM, [BATCH]);
    const sent = [];
    const failed = [];
    // One at a time, in claim order, as the reference design does.
    for (const row of rows) ((await send(row)) ? sent : failed).push(row.id);
    if (sent.length > 0) {
      await client.query(
        "UPDATE outbox SET status = 'published', published_at = now() WHERE id = ANY($1::uuid[])",
        [sent],
      );
    }
    if (failed.length > 0) {
      await client.query(
        `UPDATE outbox SET attempts = attempts + 1,
           next_attempt_at = now() + interval '1 second' * least(60, power(2, attempts))
         WHERE id = ANY($1::uuid[])`,
        [failed],
      );
    }
    await client.query("COMMIT");
    return rows.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function publisherLoop() {
  while (running) {
    try {
      if ((await publishOnce()) === 0) await sleep(POLL_MS);
    } catch (error) {
      if (running) console.error("publisher:", error.message);
      await sleep(POLL_MS);
    }
  }
}

const server = servePeer(PORT, { commit, stats, prefill });

const loops = PUBLISH ? Array.from({ length: PUBLISHERS }, publisherLoop) : [];

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  running = false;
  server.close();
  server.closeAllConnections();
  await Promise.allSettled(loops);
  await pool.end().catch(() => {});
  process.exit(0);
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
setTimeout(shutdown, MAX_SECONDS * 1000).unref();
