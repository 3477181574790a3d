// CPU per delivery of the delivery rows' own SQL, in process (no HTTP, no receiver): insert a
// delivery (as a commit does), claim it by id, complete it as delivered (issue 12, session 4).
// `with-ready` re-creates the index dropped in migration 0014 (deliveries_ready), for an A/B:
//   bun bench/probe/indexes.ts [with-ready]
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db/migrate.ts";
import { openDatabase } from "../../src/db/open.ts";
import { claimDeliveriesById } from "../../src/deliveries/claim.ts";
import { completeDeliveries } from "../../src/deliveries/complete.ts";
import { enqueueDelivery } from "../../src/deliveries/enqueue.ts";
import { tempDir } from "../lib.ts";

const withReady = process.argv[2] === "with-ready";
const N = 20000,
  G = 10;
const dir = tempDir("idx-");
const db = await openDatabase(
  loadConfig({
    OUTBOXD_DATABASE_URL: `file:${join(dir, "o.db")}`,
    OUTBOXD_ADMIN_TOKEN: "x".repeat(32),
    OUTBOXD_SYNCHRONOUS: "NORMAL",
  }),
);
await db.writer.write(migrate());
await db.driver.executeAlone(
  `INSERT INTO endpoints (id, url, secrets, event_types, disabled, created_at, updated_at)
   VALUES ('ep1', 'http://x', '[]', '["*"]', 0, 0, 0)`,
);
if (withReady) {
  await db.driver.executeAlone(
    "CREATE INDEX deliveries_ready ON deliveries (next_attempt_at) WHERE status = 'pending' AND is_head = 1",
  );
}
const B = { durable: false };
let insertUs = 0,
  completeUs = 0;
for (let i = 0; i < N; i += G) {
  const now = Date.now();
  let c = process.cpuUsage();
  const ids = await db.writer.write(function* () {
    const out: string[] = [];
    for (let j = 0; j < G; j++)
      out.push(
        yield* enqueueDelivery({
          eventId: `ev${i + j}`,
          endpointId: "ep1",
          aggregate: `orders/o-${Math.random()}`,
          sequence: 1,
          type: "t",
          availableAt: now,
          deliverBy: now + 1e9,
          now,
        }),
      );
    return out;
  }, B);
  let d = process.cpuUsage(c);
  insertUs += d.user + d.system;
  c = process.cpuUsage();
  const claimed = await db.writer.write(
    () => claimDeliveriesById({ owner: "o", now, leaseMs: 60000, ids }),
    B,
  );
  await db.writer.write(
    () =>
      completeDeliveries(
        claimed.map((x) => ({
          attempt: {
            deliveryId: x.id,
            owner: "o",
            endpointId: "ep1",
            aggregate: x.aggregate,
            startedAt: now,
            durationMs: 1,
            statusCode: 200,
            error: null,
            responsePrefix: null,
          },
          completion: { kind: "delivered" as const, at: now, latencyMs: 1 },
        })),
      ),
    B,
  );
  d = process.cpuUsage(c);
  completeUs += d.user + d.system;
}
console.log(
  JSON.stringify({
    withReady,
    insertUsPerDelivery: +(insertUs / N).toFixed(1),
    claimCompleteUsPerDelivery: +(completeUs / N).toFixed(1),
  }),
);
await db.close();
rmSync(dir, { recursive: true, force: true });
