// Limit of the commit path: a bare Hono handler plus the same grouped SQLite statements as an
// outboxd commit of one record and one event (read the record, insert or update it, read the
// aggregate's next sequence, insert the event, insert the commit row), on outboxd's own schema,
// driver and group-commit writer, `synchronous=FULL`; no auth, validation, fan-out or JSON
// shaping. What outboxd's commit path would cost with nothing of its own around the storage.
//
//   PORT=0 npx bun bench/peers/bare-hono-sqlite.ts           → {"listening": "http://127.0.0.1:N"}
//   IN_PROCESS=1 DURATION=5 npx bun bench/peers/bare-hono-sqlite.ts → {"commitsPerSecond": n}
//
// Env: PORT (0 = pick one), IN_PROCESS (1: no sockets, CONNECTIONS (64) loops call the app's
// `request` for DURATION seconds after WARMUP (0) seconds uncounted, as
// bench/load/in-process-commits.ts does for outboxd),
// MAX_SECONDS (exits by itself after this long, 3600).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { migrate } from "../../src/db/migrate.ts";
import { get, type Op, run } from "../../src/db/op.ts";
import { openDatabase } from "../../src/db/open.ts";

const PORT = Number(process.env.PORT ?? 0);
const MAX_SECONDS = Number(process.env.MAX_SECONDS ?? 3600);
const IN_PROCESS = process.env.IN_PROCESS === "1";

const dir = mkdtempSync(join(tmpdir(), "outboxd-bench-bare-sqlite-"));
const db = await openDatabase({
  databaseUrl: `file:${join(dir, "bare.db")}`,
  databaseAuthToken: undefined,
  synchronous: "FULL",
  busyTimeoutMs: 5000,
});
await db.writer.write(migrate());

function* commit(body: {
  records: { collection: string; id: string; data: unknown }[];
  events: { type: string; payload: unknown }[];
}): Op<string> {
  const now = Date.now();
  const record = body.records[0] as { collection: string; id: string; data: unknown };
  const current = yield* get<{ version: number }>(
    "SELECT version, deleted, created_at AS createdAt FROM records WHERE collection = :collection AND id = :id",
    { collection: record.collection, id: record.id },
  );
  const args = {
    collection: record.collection,
    id: record.id,
    data: JSON.stringify(record.data),
    now,
    version: (current?.version ?? 0) + 1,
  };
  yield* run(
    current
      ? "UPDATE records SET version = :version, data = :data, deleted = 0, created_at = :now, updated_at = :now WHERE collection = :collection AND id = :id"
      : "INSERT INTO records (collection, id, version, data, deleted, created_at, updated_at) VALUES (:collection, :id, :version, :data, 0, :now, :now)",
    args,
  );
  const aggregate = `${record.collection}/${record.id}`;
  const next = yield* get<{ sequence: number }>(
    "SELECT coalesce(max(sequence), 0) + 1 AS sequence FROM events WHERE aggregate = :key",
    { key: aggregate },
  );
  const eventId = crypto.randomUUID();
  const commitId = `cmt_${crypto.randomUUID()}`;
  yield* run(
    `INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_after, deliver_by, commit_id, traceparent)
     VALUES (:id, :type, :aggregate, :sequence, :payload, :now, NULL, :deliverBy, :commitId, NULL)`,
    {
      id: eventId,
      type: body.events[0]?.type ?? "record.committed",
      aggregate,
      sequence: next?.sequence ?? 1,
      payload: JSON.stringify(body.events[0]?.payload ?? null),
      now,
      deliverBy: now + 86_400_000,
      commitId,
    },
  );
  // (The ledger's statements (chain head, record version) are not here: this limit is the
  // commit path without them; bench/scenarios/ledger.ts measures what they add.)
  yield* run(`INSERT INTO commits (id, token_id, created_at) VALUES (:id, 'bench', :now)`, {
    id: commitId,
    now,
  });
  return eventId;
}

const app = new Hono();
app.post("/v1/commits", async (c) => {
  const body = await c.req.json();
  // A function, as outboxd's commits are: the writer then groups them the same way (one savepoint
  // per group, src/db/writer.ts), so the limit keeps measuring the same storage work.
  const eventId = await db.writer.write(() => commit(body));
  return c.json({ events: [{ id: eventId }] }, 201);
});

const stopAll = async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
};

if (IN_PROCESS) {
  const seconds = Number(process.env.DURATION ?? 5);
  const warmup = Number(process.env.WARMUP ?? 0);
  const connections = Number(process.env.CONNECTIONS ?? 64);
  let n = 0;
  let ok = 0;
  const counted = performance.now() + warmup * 1000;
  const end = counted + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const id = `o-${n++}`;
      const response = await app.request("/v1/commits", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          records: [{ collection: "orders", id, data: { status: "paid", total: 1250 } }],
          events: [{ type: "order.paid", payload: { orderId: id, total: 1250 } }],
        }),
      });
      await response.arrayBuffer();
      if (response.status === 201 && performance.now() >= counted) ok++;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  console.log(
    JSON.stringify({
      commitsPerSecond: Math.round(ok / ((performance.now() - counted) / 1000)),
      commits: ok,
    }),
  );
  await stopAll();
  process.exit(0);
}

const server = Bun.serve({ hostname: "127.0.0.1", port: PORT, fetch: app.fetch });
console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }));
const stop = async () => {
  server.stop(true);
  await stopAll();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
setTimeout(stop, MAX_SECONDS * 1000).unref();
