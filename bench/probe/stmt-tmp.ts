import { join } from "node:path";
import Database from "libsql";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db/migrate.ts";
import { openDatabase } from "../../src/db/open.ts";
import { runOpSync, type Statement } from "../../src/db/op.ts";
import { claimDeliveries, claimDeliveriesById } from "../../src/deliveries/claim.ts";
import { completeDeliveries } from "../../src/deliveries/complete.ts";
import { enqueueDelivery } from "../../src/deliveries/enqueue.ts";
import { loadSendContext } from "../../src/dispatch/send-context.ts";
import { tempDir } from "../lib.ts";

const dir = tempDir("stmt-");
const file = join(dir, "o.db");
const db0 = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: `file:${file}`, OUTBOXD_ADMIN_TOKEN: "x".repeat(32) }));
await db0.writer.write(migrate());
await db0.close();
const db = new Database(file);
db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32000");
db.exec(`INSERT INTO endpoints (id, url, secrets, event_types, disabled, created_at, updated_at) VALUES ('ep_1', 'http://x', '[]', '["*"]', 0, 0, 0)`);
const cache = new Map<string, any>();
const times = new Map<string, number>();
let timing = false;
const exec = (s: Statement) => {
  let p = cache.get(s.sql);
  if (!p) { p = db.prepare(s.sql); cache.set(s.sql, p); }
  const t = performance.now();
  const r = s.kind === "all" ? p.all(s.args) : s.kind === "get" ? p.get(s.args) : p.run(s.args).changes;
  if (timing) { const k = s.sql.replace(/\s+/g, " ").slice(0, 60); times.set(k, (times.get(k) ?? 0) + performance.now() - t); }
  return r;
};
const tx = <T>(op: any, label: string): T => {
  let t = performance.now();
  db.exec("BEGIN IMMEDIATE");
  if (timing) times.set("BEGIN", (times.get("BEGIN") ?? 0) + performance.now() - t);
  const r = runOpSync(op, exec);
  t = performance.now();
  db.exec("COMMIT");
  if (timing) times.set(`COMMIT ${label}`, (times.get(`COMMIT ${label}`) ?? 0) + performance.now() - t);
  return r as T;
};
const AGG = 1000, PER = 20, now0 = Date.now();
for (let s = 1; s <= PER; s++) {
  tx(function* () {
    for (let a = 0; a < AGG; a++) yield* enqueueDelivery({ eventId: `ev-${a}-${s}`, endpointId: "ep_1", aggregate: `orders/o-${a}`, sequence: s, type: "t", availableAt: now0, deliverBy: now0 + 1e9, now: now0 });
  }(), "fill");
}
const B = Number(process.argv[2] ?? 64);
let n = 0;
let claimed: any[] = tx(claimDeliveries({ owner: "o", now: Date.now(), leaseMs: 60000, limit: B, endpointRoom: {}, endpointLimit: B }), "claim");
timing = true;
const t0 = performance.now();
while (claimed.length > 0 && n < 15000) {
  const now = Date.now();
  const res: any = tx(function* () {
    const batch = yield* completeDeliveries(claimed.map((x) => ({ attempt: { deliveryId: x.id, owner: "o", endpointId: "ep_1", aggregate: x.aggregate, startedAt: now, durationMs: 1, statusCode: 200, error: null, responsePrefix: null }, completion: { kind: "delivered" as const, at: now, latencyMs: 1 } })));
    const rows = yield* claimDeliveriesById({ owner: "o", now, leaseMs: 60000, ids: batch.promoted.map((p) => p.id) });
    yield* loadSendContext(rows.map((r) => r.eventId), ["ep_1"]);
    return rows;
  }(), "complete");
  n += claimed.length;
  claimed = res;
}
const total = performance.now() - t0;
console.log(JSON.stringify({ B, n, usPerDelivery: +((total * 1000) / n).toFixed(1) }));
for (const [k, v] of [...times].sort((a, b) => b[1] - a[1])) console.log(((v * 1000) / n).toFixed(1).padStart(7), k);
