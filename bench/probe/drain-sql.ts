// The drain's SQL alone, in process (no HTTP, no receiver, no send worker): a backlog over 1,000
// aggregates (bench/scenarios/delivery.ts prefill) completed as delivered, GROUP at a time, each
// batch's promoted heads claimed by id and their events read in the same transaction, as the
// dispatcher's completeAndClaim does (leased by the promotion itself), with up to
// 64 leased at a time as its slots are. Prints the
// main thread's CPU per delivery: a steadier figure than drain.ts's for comparing the delivery
// rows' SQL (e.g. an index change). Also the pages each of the last drain
// transactions wrote to the WAL, by b-tree (its frame headers, mapped through dbstat): where
// the index maintenance goes. ROOT=other checkout: its SQL and schema.
//   [ROOT=/path] bun bench/probe/drain-sql.ts [total=30000] [group=64]
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { REPO, tempDir } from "../lib.ts";

const root = process.env.ROOT ?? REPO;
const total = Number(process.argv[2] ?? 30000);
const group = Number(process.argv[3] ?? 64);
const AGGREGATES = 1000;
const IN_FLIGHT = 64;

const { prefill } = await import(join(root, "bench/scenarios/delivery.ts"));
const { loadConfig } = await import(join(root, "src/config.ts"));
const { openDatabase } = await import(join(root, "src/db/open.ts"));
const { all } = await import(join(root, "src/db/op.ts"));
const { claimDeliveries, claimDeliveriesById, claimDeliveriesByRowid } = await import(
  join(root, "src/deliveries/claim.ts")
);
// A tree whose promotion leases the promoted heads itself has heads.ts promoteAndLease.
const leasing = "promoteAndLease" in (await import(join(root, "src/deliveries/heads.ts")));
const { completeDeliveries } = await import(join(root, "src/deliveries/complete.ts"));

interface Leased {
  rid?: number;
  id: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
}

const dir = tempDir("outboxd-probe-drain-sql-");
await prefill(dir, { url: "http://127.0.0.1:9/never", secret: `whsec_${"a".repeat(32)}` }, total, AGGREGATES);
const db = await openDatabase(
  loadConfig({
    OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
    OUTBOXD_ADMIN_TOKEN: "x".repeat(32),
  }),
);
const OWNER = "probe";
const lease = () => ({ owner: OWNER, now: Date.now(), leaseMs: 600_000 });
const eventsOf = (rows: Leased[]) =>
  all(
    `SELECT id, type, aggregate, sequence, payload, occurred_at AS occurredAt, traceparent FROM events
     WHERE id IN (SELECT value FROM json_each(:ids))`,
    { ids: JSON.stringify(rows.map((r) => (r as Leased & { eventId: string }).eventId)) },
  );

let leased: Leased[] = await db.writer.write(
  claimDeliveries({ ...lease(), limit: IN_FLIGHT, endpointRoom: {}, endpointLimit: IN_FLIGHT }),
);
/** Bytes this process has written (WAL frames, mostly): how many pages the drain dirties. */
const written = () => Number(/wchar: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))?.[1]);
let delivered = 0;
let halfway: Record<string, number> | null = null;
const writtenBefore = written();
const started = process.threadCpuUsage();
const wallStarted = performance.now();
while (leased.length > 0) {
  const batch = leased.slice(0, group);
  const rest = leased.slice(group);
  const now = Date.now();
  const claimed: Leased[] = await db.writer.write(function* () {
    const { promoted, leased: leasedThere } = yield* completeDeliveries(
      batch.map((d) => ({
        attempt: {
          deliveryId: d.id,
          owner: OWNER,
          endpointId: d.endpointId,
          aggregate: d.aggregate,
          startedAt: now,
          durationMs: 1,
          statusCode: 200,
          error: null,
          responsePrefix: null,
          // Where the row is (found by rowid, as the dispatcher does).
          sent: { rid: d.rid, aggregate: d.aggregate, sequence: d.sequence },
        },
        completion: { kind: "delivered", at: now, latencyMs: 1 },
      })),
      ...(leasing ? [lease()] : []),
    );
    const heads = promoted as { id: string; rid: number }[];
    const rows: Leased[] = leasing
      ? (leasedThere as Leased[])
      : claimDeliveriesByRowid
        ? yield* claimDeliveriesByRowid({ ...lease(), rids: heads.map((p) => p.rid) })
        : yield* claimDeliveriesById({ ...lease(), ids: heads.map((p) => p.id) });
    yield* eventsOf(rows);
    return rows;
  });
  delivered += batch.length;
  // Mid-drain, when every queue still has rows behind its head.
  if (!halfway && delivered >= total / 2) halfway = walFramesByTree(join(dir, "outboxd.db"), 5);
  leased = [...rest, ...claimed];
  if (leased.length < IN_FLIGHT / 2) {
    const more: Leased[] = await db.writer.write(
      claimDeliveries({
        ...lease(),
        limit: IN_FLIGHT - leased.length,
        endpointRoom: {},
        endpointLimit: IN_FLIGHT,
      }),
    );
    leased = [...leased, ...more];
  }
}
const cpu = process.threadCpuUsage(started);
const seconds = (performance.now() - wallStarted) / 1000;
console.log(
  JSON.stringify({
    root,
    total,
    delivered,
    group,
    mainUsPerDelivery: +((cpu.user + cpu.system) / delivered).toFixed(1),
    perSecond: Math.round(delivered / seconds),
    bytesWrittenPerDelivery: Math.round((written() - writtenBefore) / delivered),
  }),
);
console.log(JSON.stringify({ walFramesPerTransactionHalfway: halfway }));
await db.close();
rmSync(dir, { recursive: true, force: true });

/** The WAL frames of its last `count` transactions, per transaction and b-tree. */
function walFramesByTree(file: string, count: number): Record<string, number> {
  const wal = readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salt = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const transactions: number[][] = [];
  let pages: number[] = [];
  // Frames of the WAL's current generation (its salts), a transaction ending at each commit frame.
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt[0] || wal.readUInt32BE(at + 12) !== salt[1]) break;
    pages.push(wal.readUInt32BE(at));
    if (wal.readUInt32BE(at + 4) !== 0) {
      transactions.push(pages);
      pages = [];
    }
  }
  const raw = new Database(file, { readonly: true });
  const tree = new Map(
    (raw.prepare("SELECT pageno, name FROM dbstat").all() as { pageno: number; name: string }[]).map((r) => [
      r.pageno,
      r.name,
    ]),
  );
  raw.close();
  const last = transactions.slice(-count);
  const frames: Record<string, number> = { all: last.flat().length / last.length };
  for (const page of last.flat()) {
    const name = tree.get(page) ?? "?";
    frames[name] = (frames[name] ?? 0) + 1 / last.length;
  }
  return Object.fromEntries(
    Object.entries(frames)
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => [name, Math.round(n * 10) / 10]),
  );
}
