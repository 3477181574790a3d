// Scenario 4: the cost of a claim and of GET /v1/stats with 10k, 100k and 1M rows of delivered
// history (and a fixed pending backlog), and of a claim with a growing pending backlog. Both
// must stay flat: they read partial indexes over pending rows or time ranges, never history.
import { join } from "node:path";
import { migrate } from "../../src/db/migrate.ts";
import { run } from "../../src/db/op.ts";
import { openDatabase } from "../../src/db/open.ts";
import { claimDeliveries } from "../../src/deliveries/claim.ts";
import { stats } from "../../src/ops/stats.ts";
import { median, tempDir } from "../lib.ts";

export interface GrowthRow {
  history: number;
  pending: number;
  claimMs: number;
  statsMs: number;
}

const ENDPOINT = "ep_bench";

/** Rows straight into the table, in one statement (a recursive counter). */
function* fill(status: "delivered" | "pending", count: number, aggregates: number, offset: number) {
  const now = Date.now();
  yield* run(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < :count)
     INSERT INTO deliveries (id, event_id, endpoint_id, aggregate, sequence, event_type, status, is_head,
       available_at, next_attempt_at, deliver_by, delivered_at, created_at)
     SELECT printf('dlv_%012d', i + :offset), printf('evt-%d', i + :offset), :endpoint,
       printf('orders/o-%d', i % :aggregates), (i / :aggregates) + 1, 'order.paid', :status,
       CASE WHEN :status = 'pending' AND i < :aggregates THEN 1 ELSE 0 END,
       :past, :past, :future, CASE WHEN :status = 'delivered' THEN :recent ELSE NULL END, :past
     FROM n`,
    {
      count,
      aggregates,
      offset,
      endpoint: ENDPOINT,
      status,
      past: now - 60_000,
      future: now + 86_400_000,
      recent: now - 2 * 86_400_000,
    },
  );
}

async function measure(history: number, pending: number): Promise<GrowthRow> {
  const dir = tempDir("outboxd-bench-growth-");
  const db = await openDatabase({
    databaseUrl: `file:${join(dir, "outboxd.db")}`,
    databaseAuthToken: undefined,
    synchronous: "NORMAL",
    busyTimeoutMs: 5000,
  });
  try {
    await db.writer.write(migrate());
    await db.writer.write(
      run(
        "INSERT INTO endpoints (id, url, event_types, secrets, created_at, updated_at) VALUES (:id, 'http://127.0.0.1:9/', '[]', '[]', 0, 0)",
        { id: ENDPOINT },
      ),
    );
    if (history > 0) await db.writer.write(fill("delivered", history, 1000, 0));
    if (pending > 0) await db.writer.write(fill("pending", pending, 1000, history));
    const claimTimes: number[] = [];
    const statsTimes: number[] = [];
    for (let i = 0; i < 30; i++) {
      // Claim 64 heads inside a transaction that is then rolled back: every run sees the same rows.
      let started = performance.now();
      await db.driver
        .transaction(
          (function* () {
            yield* claimDeliveries({
              owner: "bench",
              now: Date.now(),
              leaseMs: 60_000,
              limit: 64,
              endpointRoom: {},
              endpointLimit: 64,
            });
            throw new Rollback();
          })(),
        )
        .catch((error) => {
          if (!(error instanceof Rollback)) throw error;
        });
      claimTimes.push(performance.now() - started);
      started = performance.now();
      await db.driver.read(stats(Date.now()));
      statsTimes.push(performance.now() - started);
    }
    const row = { history, pending, claimMs: round(median(claimTimes)), statsMs: round(median(statsTimes)) };
    console.error(
      `growth history=${history} pending=${pending}: claim ${row.claimMs} ms, stats ${row.statsMs} ms`,
    );
    return row;
  } finally {
    await db.close();
  }
}

class Rollback extends Error {}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

export async function growthScenario(sizes: number[]): Promise<GrowthRow[]> {
  const rows: GrowthRow[] = [];
  // Growing history with a fixed backlog of 10k pending deliveries over 1,000 aggregates…
  for (const history of sizes) rows.push(await measure(history, 10_000));
  // …and a growing backlog (the claim must still read heads only).
  for (const pending of sizes) rows.push(await measure(0, pending));
  return rows;
}
