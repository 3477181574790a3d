// Scenario: what the ledger (DESIGN §13) costs. Commits/s with the ledger against the same load
// without its statements (OUTBOXD_BENCH_WITHOUT_LEDGER=1, a bench-only switch), runs alternated
// so a busy machine weighs on both alike; bytes on disk per commit either way; and a page of 100
// versions of a record that has 10,000 of them, over HTTP.
//   bun bench/scenarios/ledger.ts [--quick]     # this scenario alone

import { rmSync } from "node:fs";
import { join } from "node:path";
import { type CommitInput, commitOp } from "../../src/commit/commit-op.ts";
import { type Database as OutboxdDatabase, openDatabase } from "../../src/db/open.ts";
import { migrateDatabase } from "../../src/ledger/genesis.ts";
import { recordHistory } from "../../src/ledger/history.ts";
import { Database } from "../../test/helpers/sqlite.ts";
import { load, median, percentile, startOutboxd, TOKEN, tempDir } from "../lib.ts";
import { COMMIT_BODY } from "./commit.ts";

export interface LedgerRow {
  connections: number;
  /** Median commits/s of the runs, with the ledger and without its statements. */
  withLedger: number[];
  withoutLedger: number[];
  /** withLedger median / withoutLedger median. */
  ratio: number;
  /** Database bytes (after a checkpoint) per commit. */
  bytesPerCommitWith: number;
  bytesPerCommitWithout: number;
}

export interface GrowthRow {
  commits: number;
  /** Database bytes in use per commit (one record + one event each), with the ledger's rows. */
  bytesPerCommitWith: number;
  /** The same database after removing what only the ledger writes (versions, chain columns, digests, its index). */
  bytesPerCommitWithout: number;
}

export interface HistoryRow {
  versions: number;
  pageSize: number;
  requests: number;
  /** The history read alone (driver, no HTTP), page of 100 at the newest end. */
  queryP50Ms: number;
  newestPageP50Ms: number;
  newestPageP99Ms: number;
  deepPageP50Ms: number;
}

/** Database size after a checkpoint, divided by its commit rows. */
function bytesPerCommit(dir: string): number {
  const file = join(dir, "outboxd.db");
  const db = new Database(file);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const commits = (db.prepare("SELECT count(*) AS n FROM commits").get() as { n: number }).n;
  const pages = db.prepare("PRAGMA page_count").get() as { page_count: number };
  const free = db.prepare("PRAGMA freelist_count").get() as { freelist_count: number };
  const pageSize = (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
  db.close();
  return Math.round(((pages.page_count - free.freelist_count) * pageSize) / Math.max(1, commits));
}

export async function ledgerCommitScenario(options: {
  seconds: number;
  runs: number;
  connections: number[];
}): Promise<LedgerRow[]> {
  const rows: LedgerRow[] = [];
  for (const connections of options.connections) {
    const withLedger: number[] = [];
    const withoutLedger: number[] = [];
    const bytesWith: number[] = [];
    const bytesWithout: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      // Alternate which goes first, so a drift in the machine's load favours neither.
      const order = run % 2 === 0 ? [true, false] : [false, true];
      for (const ledger of order) {
        const outboxd = await startOutboxd(ledger ? {} : { OUTBOXD_BENCH_WITHOUT_LEDGER: "1" });
        try {
          const result = await load({
            url: `${outboxd.url}/v1/commits`,
            connections,
            seconds: options.seconds,
            body: COMMIT_BODY,
            headers: { authorization: `Bearer ${TOKEN}` },
          });
          (ledger ? withLedger : withoutLedger).push(result.requestsPerSecond);
          (ledger ? bytesWith : bytesWithout).push(bytesPerCommit(outboxd.dir));
        } finally {
          await outboxd.stop();
        }
      }
    }
    const row: LedgerRow = {
      connections,
      withLedger,
      withoutLedger,
      ratio: Number((median(withLedger) / Math.max(1, median(withoutLedger))).toFixed(3)),
      bytesPerCommitWith: median(bytesWith),
      bytesPerCommitWithout: median(bytesWithout),
    };
    console.error(
      `ledger c=${connections}: with ${withLedger.join("/")} without ${withoutLedger.join("/")} commits/s ` +
        `(ratio ${row.ratio}); ${row.bytesPerCommitWith} vs ${row.bytesPerCommitWithout} bytes/commit`,
    );
    rows.push(row);
  }
  return rows;
}

async function openBenchDatabase(file: string): Promise<OutboxdDatabase> {
  const db = await openDatabase({
    databaseUrl: `file:${file}`,
    databaseAuthToken: undefined,
    synchronous: "NORMAL",
    busyTimeoutMs: 5000,
  });
  await db.writer.write(migrateDatabase());
  return db;
}

/** A commit of one `orders` record and one event, as the commit operation takes it (no HTTP). */
function oneRecordOneEvent(
  now: number,
  record: { id: string; data: string },
  event: { type: string; aggregate: string; payload: string },
): CommitInput {
  return {
    by: { tokenId: "tok_bench", tokenName: "bench" },
    records: [{ collection: "orders", id: record.id, expectedVersion: undefined, data: record.data }],
    events: [
      { id: undefined, ...event, deliverAfter: null, deliverBy: now + 86_400_000, endpoints: undefined },
    ],
    idempotency: undefined,
    traceparent: undefined,
    conflictStatus: 409,
    maxDeliveries: 10_000,
    now,
  };
}

/** `count` commits through the Writer, 500 at a time, grouped as concurrent requests would be. */
async function writeCommits(db: OutboxdDatabase, count: number, make: (i: number) => CommitInput) {
  for (let from = 0; from < count; from += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - from) }, (_, j) =>
        db.writer.write(commitOp(make(from + j))),
      ),
    );
  }
}

function inUse(file: string): number {
  const db = new Database(file);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const pages = (db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count;
  const free = (db.prepare("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count;
  const size = (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
  db.close();
  return (pages - free) * size;
}

/**
 * Bytes on disk per commit of the benchmark's shape (one record, one event, many aggregates),
 * with the ledger, and once what only the ledger writes is removed and the file vacuumed.
 */
export async function ledgerGrowthScenario(commits = 20_000): Promise<GrowthRow> {
  const dir = tempDir("outboxd-bench-ledger-growth-");
  const file = join(dir, "outboxd.db");
  const db = await openBenchDatabase(file);
  const now = Date.now();
  await writeCommits(db, commits, (i) =>
    oneRecordOneEvent(
      now + i,
      { id: `o-${i}`, data: '{"status":"paid","total":1250}' },
      {
        type: "order.paid",
        aggregate: `orders/o-${i}`,
        payload: `{"orderId":"o-${i}","total":1250}`,
      },
    ),
  );
  await db.close();
  const withLedger = inUse(file);
  const strip = new Database(file);
  strip.exec(`DELETE FROM record_versions;
    UPDATE commits SET seq = NULL, hash = NULL, token_name = NULL, proposal_id = NULL, record_count = NULL,
      event_count = NULL, record_keys = NULL, event_pos = NULL;
    UPDATE records SET commit_id = NULL, data_digest = NULL;
    UPDATE events SET payload_digest = NULL;
    DROP INDEX commits_seq; DROP INDEX record_versions_key;
    VACUUM;`);
  strip.close();
  const withoutLedger = inUse(file);
  rmSync(dir, { recursive: true, force: true });
  const row = {
    commits,
    bytesPerCommitWith: Math.round(withLedger / commits),
    bytesPerCommitWithout: Math.round(withoutLedger / commits),
  };
  console.error(
    `ledger growth: ${row.bytesPerCommitWith} bytes/commit with, ${row.bytesPerCommitWithout} without`,
  );
  return row;
}

/** One record with `versions` versions (each commit also sends one event), then pages of its history over HTTP. */
export async function historyScenario(versions = 10_000, requests = 300): Promise<HistoryRow> {
  const dir = tempDir("outboxd-bench-history-");
  const db = await openBenchDatabase(join(dir, "outboxd.db"));
  const now = Date.now();
  await writeCommits(db, versions, (i) =>
    oneRecordOneEvent(
      now + i,
      { id: "hot", data: JSON.stringify({ n: i, status: "paid" }) },
      {
        type: "order.changed",
        aggregate: "orders/hot",
        payload: JSON.stringify({ n: i }),
      },
    ),
  );
  const query: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    await db.driver.read(recordHistory("orders", "hot", 100, undefined));
    query.push(performance.now() - started);
  }
  await db.close();

  const outboxd = await startOutboxd({}, "serve", dir);
  try {
    const time = async (path: string) => {
      const started = performance.now();
      const response = await fetch(`${outboxd.url}${path}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const body = (await response.json()) as { data: unknown[] };
      const ms = performance.now() - started;
      if (response.status !== 200 || body.data.length !== 100)
        throw new Error(`history answered ${response.status}`);
      return ms;
    };
    const path = "/v1/records/orders/hot/history?limit=100";
    for (let i = 0; i < 20; i++) await time(path); // warm-up: prepared statements, page cache
    const newest: number[] = [];
    const deep: number[] = [];
    for (let i = 0; i < requests; i++) {
      newest.push(await time(path));
      deep.push(await time(`${path}&after=${Math.floor(versions / 2)}`));
    }
    const row: HistoryRow = {
      versions,
      pageSize: 100,
      requests,
      queryP50Ms: Number(median(query).toFixed(2)),
      newestPageP50Ms: Number(median(newest).toFixed(2)),
      newestPageP99Ms: Number(percentile(newest, 99).toFixed(2)),
      deepPageP50Ms: Number(median(deep).toFixed(2)),
    };
    console.error(
      `history of ${versions} versions, page of 100: query alone p50 ${row.queryP50Ms} ms; over HTTP p50 ${row.newestPageP50Ms} ms, p99 ${row.newestPageP99Ms} ms; from the middle p50 ${row.deepPageP50Ms} ms`,
    );
    return row;
  } finally {
    await outboxd.stop();
  }
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  const commits = await ledgerCommitScenario(
    // Quick: still three alternated pairs (one pair of 2 s runs was within its own noise: 0.80-1.26).
    quick ? { seconds: 2, runs: 3, connections: [64] } : { seconds: 5, runs: 3, connections: [64] },
  );
  const growth = await ledgerGrowthScenario(quick ? 5_000 : 20_000);
  const history = await historyScenario(10_000, quick ? 50 : 300);
  console.log(JSON.stringify({ commits, growth, history }, null, 2));
}
