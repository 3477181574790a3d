// Migration 0009 on a database made with the schema before it, holding data: every row is kept,
// the stored idempotency responses move out of the commit rows and still answer retries, and the
// chain starts there with a genesis commit listing each record's current version. Migration 0012
// on a chained database: current versions move into the records rows, the chain is unchanged.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { openDatabase } from "../../src/db/open.ts";
import { type ChainRecord, chainHash, ZERO_HASH } from "../../src/ledger/chain.ts";
import { migrateDatabase } from "../../src/ledger/genesis.ts";
import { recordHistory } from "../../src/ledger/history.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { canonicalJson, sha256Hex } from "../../src/lib/canonical-json.ts";
import { startServer, tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

const dir = tempDir("outboxd-ledger-migration-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BEFORE_LEDGER = migrations.findIndex((m) => m.tag === "0009_ledger");
const T = Date.parse("2026-11-20T10:00:00Z");
const RETRIED_BODY = { records: [{ collection: "returns", id: "r-1", data: { status: "approved" } }] };
const STORED_RESPONSE = JSON.stringify({
  result: {
    commitId: "cmt_old_2",
    records: [{ collection: "returns", id: "r-1", version: 2, deleted: false }],
    events: [],
  },
  written: [{ created: false, createdAt: T, updatedAt: T + 1000 }],
});

function count(file: string, table: string): number {
  const db = new Database(file);
  const row = db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
  db.close();
  return row.n;
}

test("an older database keeps every row, its idempotency responses, and starts the chain at genesis", async () => {
  expect(BEFORE_LEDGER).toBeGreaterThan(0);
  const file = join(dir, "old.db");
  const url = `file:${file}`;
  const old = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  await old.writer.write(migrate(migrations.slice(0, BEFORE_LEDGER)));
  await old.close();

  // Data as the version before the ledger wrote it.
  const requestHash = sha256Hex(canonicalJson({ body: RETRIED_BODY, mode: 409 }));
  const seed = new Database(file);
  seed.exec(`
    INSERT INTO records VALUES ('returns', 'r-1', 2, '{"status":"approved","by":"u-9"}', 0, ${T}, ${T + 1000});
    INSERT INTO records VALUES ('returns', 'r-2', 3, 'null', 1, ${T}, ${T + 2000});
    INSERT INTO records VALUES ('orders', 'o-1', 1, '{"10":1,"2":2}', 0, ${T}, ${T});
    INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id)
      VALUES ('0193a1f2-0000-7000-8000-000000000001', 'return.opened', 'returns/r-1', 1, '{}', ${T}, ${T + 86400000}, 'cmt_old_1'),
             ('0193a1f2-0000-7000-8000-000000000002', 'return.approved', 'returns/r-1', 2, '{"a":1}', ${T + 1000}, ${T + 86400000}, 'cmt_old_2'),
             ('0193a1f2-0000-7000-8000-000000000003', 'return.closed', 'returns/r-2', 1, '{}', ${T + 2000}, ${T + 86400000}, 'cmt_old_3');
    INSERT INTO endpoints (id, url, event_types, secrets, created_at, updated_at)
      VALUES ('ep_1', 'http://127.0.0.1:9/hook', '[]', '[]', ${T}, ${T});
    INSERT INTO deliveries (id, event_id, endpoint_id, aggregate, sequence, event_type, status, available_at, next_attempt_at, deliver_by, created_at, delivered_at)
      VALUES ('dlv_1', '0193a1f2-0000-7000-8000-000000000001', 'ep_1', 'returns/r-1', 1, 'return.opened', 'delivered', ${T}, ${T}, ${T + 86400000}, ${T}, ${T + 5});
    INSERT INTO attempts (delivery_id, started_at, duration_ms, status_code) VALUES ('dlv_1', ${T}, 5, 200);
    INSERT INTO commits (id, token_id, idempotency_key, request_hash, response, created_at)
      VALUES ('cmt_old_1', 'tok_a', NULL, NULL, NULL, ${T}),
             ('cmt_old_2', 'tok_env_admin', 'retry-me', '${requestHash}', '${STORED_RESPONSE}', ${Date.now() - 60_000}),
             ('cmt_old_3', 'tok_a', NULL, NULL, NULL, ${T + 2000});
  `);
  seed.close();
  const before = Object.fromEntries(
    ["records", "events", "endpoints", "deliveries", "attempts", "commits"].map((t) => [t, count(file, t)]),
  );

  const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  expect(await db.writer.write(migrateDatabase())).toContain("0009_ledger");
  const verified = await db.driver.read(verifyLedger());
  await db.close();
  expect(verified).toMatchObject({ ok: true, commits: 1, unchainedEvents: 3 });

  for (const [table, n] of Object.entries(before)) {
    expect(count(file, table)).toBe(table === "commits" ? n + 1 : n);
  }
  const check = new Database(file);
  expect(check.prepare("SELECT commit_id, token_id, key, response FROM idempotency_keys").all()).toEqual([
    { commit_id: "cmt_old_2", token_id: "tok_env_admin", key: "retry-me", response: STORED_RESPONSE },
  ]);
  expect(
    check.prepare("SELECT id, token_id, seq FROM commits WHERE id LIKE 'cmt_old%' ORDER BY id").all(),
  ).toEqual([
    { id: "cmt_old_1", token_id: "tok_a", seq: null },
    { id: "cmt_old_2", token_id: "tok_env_admin", seq: null },
    { id: "cmt_old_3", token_id: "tok_a", seq: null },
  ]);
  // Each record's current state is its first version in the ledger, in the genesis commit; it
  // stays in the records row (migration 0012), with its digest.
  expect(check.prepare("SELECT count(*) AS n FROM record_versions").all()).toEqual([{ n: 0 }]);
  const digest = (json: string) => sha256Hex(canonicalJson(JSON.parse(json)));
  expect(
    check
      .prepare(
        "SELECT collection, id, version, deleted, commit_id, data_digest FROM records ORDER BY collection, id",
      )
      .all(),
  ).toEqual([
    {
      collection: "orders",
      id: "o-1",
      version: 1,
      deleted: 0,
      commit_id: null,
      data_digest: digest('{"10":1,"2":2}'),
    },
    {
      collection: "returns",
      id: "r-1",
      version: 2,
      deleted: 0,
      commit_id: null,
      data_digest: digest('{"status":"approved","by":"u-9"}'),
    },
    { collection: "returns", id: "r-2", version: 3, deleted: 1, commit_id: null, data_digest: null },
  ]);
  const genesis = check
    .prepare("SELECT seq, hash, record_count FROM commits WHERE id = 'cmt_genesis'")
    .get() as {
    seq: number;
    hash: string;
    record_count: number;
  };
  check.close();
  expect(genesis.seq).toBe(0);
  expect(genesis.hash).toMatch(/^[0-9a-f]{64}$/);
  expect(genesis.record_count).toBe(3);

  // The server on the migrated database: the old key still answers its retry, the chain grows.
  const server = await startServer({ OUTBOXD_DATABASE_URL: url }, { dispatch: false });
  try {
    const retry = await server.request("POST", "/v1/commits", RETRIED_BODY, {
      "idempotency-key": "retry-me",
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.commitId).toBe("cmt_old_2");
    const put = await server.request("PUT", "/v1/records/returns/r-1", { data: { status: "refunded" } });
    expect(put.status).toBe(200);
    const history = await server.request("GET", "/v1/records/returns/r-1/history");
    expect(
      history.body.data.map((v: { version: number; commitId: string | null }) => [v.version, v.commitId]),
    ).toEqual([
      [3, put.body.commitId],
      [2, null],
    ]);
    expect(history.body.data[1]).toMatchObject({
      data: { status: "approved", by: "u-9" },
      committedBy: null,
      events: [],
    });
    const ledger = await server.request("GET", "/v1/ledger");
    expect(ledger.body).toMatchObject({ commits: 2, head: { seq: 1, commitId: put.body.commitId } });
    const links = await server.request("GET", "/v1/ledger/commits");
    expect(links.body.data[0]).toMatchObject({ seq: 0, commitId: "cmt_genesis", hash: genesis.hash });
    expect(links.body.data[1].previousHash).toBe(genesis.hash);
    expect(await server.outboxd.db.driver.read(verifyLedger())).toMatchObject({
      ok: true,
      commits: 2,
      unchainedEvents: 3,
    });
  } finally {
    await server.stop();
  }
});

test("an older database holding events but no records gets a genesis commit: its events stay unchained, a later one without a digest fails", async () => {
  const file = join(dir, "events-only.db");
  const url = `file:${file}`;
  const old = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  await old.writer.write(migrate(migrations.slice(0, BEFORE_LEDGER)));
  await old.close();
  const seed = new Database(file);
  seed.exec(`
    INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id)
      VALUES ('0193a1f2-0000-7000-8000-000000000011', 'return.opened', 'returns/r-1', 1, '{}', ${T}, ${T + 86400000}, 'cmt_old_1'),
             ('0193a1f2-0000-7000-8000-000000000012', 'return.closed', 'returns/r-1', 2, '{}', ${T + 1}, ${T + 86400000}, 'cmt_old_2');
  `);
  seed.close();
  const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  try {
    expect(await db.writer.write(migrateDatabase())).toContain("0009_ledger");
    expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true, commits: 1, unchainedEvents: 2 });
  } finally {
    await db.close();
  }
  // An event without a digest written after the ledger started is not from before it.
  const forge = new Database(file);
  forge.exec(`
    INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id)
      VALUES ('0193a1f2-0000-7000-8000-000000000013', 'return.forged', 'returns/r-1', 3, '{}', ${Date.now() + 60_000}, ${T + 86400000}, 'cmt_old_2');
  `);
  forge.close();
  const again = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  try {
    expect(await again.driver.read(verifyLedger())).toMatchObject({
      ok: false,
      problem: "event 0193a1f2-0000-7000-8000-000000000013 was added outside any commit of the chain",
    });
  } finally {
    await again.close();
  }
});

test("migration 0012 on a chained database: current versions move into their records rows, the chain still verifies with the same head", async () => {
  const upTo = migrations.findIndex((m) => m.tag === "0012_ledger_current_versions");
  expect(upTo).toBeGreaterThan(0);
  const file = join(dir, "chained.db");
  const url = `file:${file}`;
  const old = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  await old.writer.write(migrate(migrations.slice(0, upTo)));
  await old.close();
  // Two commits as the ledger wrote them before 0012: every version in record_versions.
  const digest = (json: string) => sha256Hex(canonicalJson(JSON.parse(json)));
  const v = {
    a1: { collection: "a", id: "1", version: 1, deleted: false, dataDigest: digest('{"s":1}') },
    a2: { collection: "a", id: "1", version: 2, deleted: false, dataDigest: digest('{"s":2}') },
    b1: { collection: "b", id: "1", version: 1, deleted: false, dataDigest: digest('{"s":1}') },
    b2: { collection: "b", id: "1", version: 2, deleted: true, dataDigest: null },
  };
  const commit = (seq: number, commitId: string, records: ChainRecord[]) => ({
    seq,
    commitId,
    tokenId: "tok_a",
    proposalId: null,
    at: T + seq,
    records,
    events: [],
  });
  const h0 = chainHash(ZERO_HASH, commit(0, "cmt_0", [v.a1, v.b1]));
  const h1 = chainHash(h0, commit(1, "cmt_1", [v.a2, v.b2]));
  const seed = new Database(file);
  seed.exec(`
    INSERT INTO records VALUES ('a', '1', 2, '{"s":2}', 0, ${T}, ${T + 1});
    INSERT INTO records VALUES ('b', '1', 2, 'null', 1, ${T}, ${T + 1});
    INSERT INTO record_versions (collection, id, version, data, deleted, data_digest, commit_id, at) VALUES
      ('a', '1', 1, '{"s":1}', 0, '${v.a1.dataDigest}', 'cmt_0', ${T}),
      ('b', '1', 1, '{"s":1}', 0, '${v.b1.dataDigest}', 'cmt_0', ${T}),
      ('a', '1', 2, '{"s":2}', 0, '${v.a2.dataDigest}', 'cmt_1', ${T + 1}),
      ('b', '1', 2, NULL, 1, NULL, 'cmt_1', ${T + 1});
    INSERT INTO commits (id, token_id, created_at, seq, hash, token_name, proposal_id, record_count, event_count) VALUES
      ('cmt_0', 'tok_a', ${T}, 0, '${h0}', 'a', NULL, 2, 0),
      ('cmt_1', 'tok_a', ${T + 1}, 1, '${h1}', 'a', NULL, 2, 0);
  `);
  seed.close();

  const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  try {
    expect(await db.writer.write(migrateDatabase())).toContain("0012_ledger_current_versions");
    expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true, commits: 2, head: h1 });
    const history = await db.driver.read(recordHistory("a", "1", 10, undefined));
    expect(history.map((x) => [x.version, x.commitId, x.data])).toEqual([
      [2, "cmt_1", { s: 2 }],
      [1, "cmt_0", { s: 1 }],
    ]);
    const deleted = await db.driver.read(recordHistory("b", "1", 10, undefined));
    expect(deleted.map((x) => [x.version, x.deleted, x.data])).toEqual([
      [2, true, null],
      [1, false, { s: 1 }],
    ]);
  } finally {
    await db.close();
  }
  const check = new Database(file);
  expect(
    check.prepare("SELECT collection, id, version FROM record_versions ORDER BY collection, id").all(),
  ).toEqual([
    { collection: "a", id: "1", version: 1 },
    { collection: "b", id: "1", version: 1 },
  ]);
  expect(
    check.prepare("SELECT collection, commit_id, data_digest FROM records ORDER BY collection").all(),
  ).toEqual([
    { collection: "a", commit_id: "cmt_1", data_digest: v.a2.dataDigest },
    { collection: "b", commit_id: "cmt_1", data_digest: null },
  ]);
  check.close();
});

test("migration events_by_position on a chained database: each commit finds its events by position, the chain still verifies with the same head", async () => {
  const upTo = migrations.findIndex((m) => m.tag.endsWith("_events_by_position"));
  expect(upTo).toBeGreaterThan(0);
  const file = join(dir, "positions.db");
  const url = `file:${file}`;
  const old = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  await old.writer.write(migrate(migrations.slice(0, upTo)));
  await old.close();
  // Two commits as the ledger wrote them before: events found through the events_commit index.
  const digest = (json: string) => sha256Hex(canonicalJson(JSON.parse(json)));
  const a1 = { collection: "a", id: "1", version: 1, deleted: false, dataDigest: digest('{"s":1}') };
  const event = (n: number, commitId: string) => ({
    id: `0193a1f2-0000-7000-8000-00000000000${n}`,
    type: "a.changed",
    aggregate: "a/1",
    sequence: n,
    payloadDigest: digest(`{"n":${n}}`),
    deliverAfter: null,
    deliverBy: T + 86_400_000,
    commitId,
  });
  const events = [event(1, "cmt_0"), event(2, "cmt_0"), event(3, "cmt_1")];
  const commit = (seq: number, commitId: string, records: ChainRecord[]) => ({
    seq,
    commitId,
    tokenId: "tok_a",
    proposalId: null,
    at: T + seq,
    records,
    events: events.filter((e) => e.commitId === commitId).map(({ commitId: _, ...e }) => e),
  });
  const h0 = chainHash(ZERO_HASH, commit(0, "cmt_0", [a1]));
  const h1 = chainHash(h0, commit(1, "cmt_1", []));
  const seed = new Database(file);
  seed.exec(`
    INSERT INTO records VALUES ('a', '1', 1, '{"s":1}', 0, ${T}, ${T}, 'cmt_0', '${a1.dataDigest}');
    INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id, payload_digest)
      VALUES ${events
        .map(
          (e) =>
            `('${e.id}', '${e.type}', 'a/1', ${e.sequence}, '{"n":${e.sequence}}', ${T}, ${e.deliverBy}, '${e.commitId}', '${e.payloadDigest}')`,
        )
        .join(", ")};
    INSERT INTO commits (id, token_id, created_at, seq, hash, token_name, proposal_id, record_count, event_count, record_keys) VALUES
      ('cmt_0', 'tok_a', ${T}, 0, '${h0}', 'a', NULL, 1, 2, '[["a","1",1]]'),
      ('cmt_1', 'tok_a', ${T + 1}, 1, '${h1}', 'a', NULL, 0, 1, '[]');
  `);
  seed.close();

  const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
  try {
    expect(
      (await db.writer.write(migrateDatabase())).some((tag) => tag.endsWith("_events_by_position")),
    ).toBe(true);
    expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true, commits: 2, head: h1 });
    const history = await db.driver.read(recordHistory("a", "1", 10, undefined));
    expect(history.map((x) => [x.version, x.events.map((e) => e.sequence)])).toEqual([[1, [1, 2]]]);
  } finally {
    await db.close();
  }
  const check = new Database(file);
  expect(check.prepare("SELECT id, event_pos FROM commits ORDER BY seq").all()).toEqual([
    { id: "cmt_0", event_pos: 2 },
    { id: "cmt_1", event_pos: 3 },
  ]);
  expect(check.prepare("SELECT name FROM sqlite_master WHERE name = 'events_commit'").all()).toEqual([]);
  check.close();
});
