// The scanning claim's statement (src/deliveries/claim.ts claimDeliveries) of this checkout
// against another's (ROOT), run alternately in one process on one database: a backlog over 1,000
// aggregates (bench/scenarios/delivery.ts prefill), each run claiming 64 heads inside a transaction
// rolled back, so every run sees the same rows. Prints the thread's CPU per claim of each side
// (issue 12, session 7: remote's drain spent ~1.4 ms per call of this statement on the server).
//   ROOT=/path/to/other/checkout bun bench/probe/claim-sql.ts [total=20000] [runs=500]
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { REPO, tempDir } from "../lib.ts";
import { prefill } from "../scenarios/delivery.ts";

const other = process.env.ROOT;
if (!other) throw new Error("ROOT=<another checkout> is required: the side to compare with");
const total = Number(process.argv[2] ?? 20000);
const runs = Number(process.argv[3] ?? 500);
const WARM_UP = 100;

interface Statement {
  sql: string;
  args: Record<string, unknown>;
}

/** A checkout's claim statement for 64 heads, as its claimDeliveries would run it now. */
async function claimOf(root: string): Promise<Statement> {
  const { claimDeliveries } = await import(join(root, "src/deliveries/claim.ts"));
  const op = claimDeliveries({
    owner: "probe",
    now: Date.now(),
    leaseMs: 60_000,
    limit: 64,
    endpointRoom: {},
    endpointLimit: 64,
  });
  return op.next().value as Statement;
}

const dir = tempDir("outboxd-probe-claim-sql-");
await prefill(dir, { url: "http://127.0.0.1:9/never", secret: `whsec_${"a".repeat(32)}` }, total, 1000);
const db = new Database(join(dir, "outboxd.db"));
const sides = {
  this: await claimOf(REPO),
  other: await claimOf(other),
};
const prepared = Object.fromEntries(
  Object.entries(sides).map(([name, s]) => [name, { statement: db.prepare(s.sql), args: s.args }]),
);
const cpuUs: Record<string, number> = { this: 0, other: 0 };
const rows: Record<string, number> = { this: 0, other: 0 };
for (let i = 0; i < WARM_UP + runs; i++) {
  for (const name of i % 2 ? ["this", "other"] : ["other", "this"]) {
    const side = prepared[name] as { statement: Database.Statement; args: Record<string, unknown> };
    db.exec("BEGIN");
    const started = process.threadCpuUsage();
    const claimed = side.statement.all(side.args) as unknown[];
    const used = process.threadCpuUsage(started);
    db.exec("ROLLBACK");
    if (i < WARM_UP) continue;
    cpuUs[name] = (cpuUs[name] ?? 0) + used.user + used.system;
    rows[name] = (rows[name] ?? 0) + claimed.length;
  }
}
console.log(
  JSON.stringify({
    other,
    total,
    runs,
    usPerClaim: { this: Math.round((cpuUs.this ?? 0) / runs), other: Math.round((cpuUs.other ?? 0) / runs) },
    rowsPerClaim: { this: (rows.this ?? 0) / runs, other: (rows.other ?? 0) / runs },
  }),
);
db.close();
rmSync(dir, { recursive: true, force: true });
