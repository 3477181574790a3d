// `outboxd verify` as a real child process: passes on an intact database, and after each kind of
// tampering done directly in SQLite names the first commit that does not add up (exit 1).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../../src/lib/canonical-json.ts";
import { REPO } from "../helpers/process.ts";
import { startServer, tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

function outboxd(args: string[], file: string) {
  const run = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", OUTBOXD_DATABASE_URL: `file:${file}`, OUTBOXD_LOG_LEVEL: "error" },
  });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

let dir: string;
let original: string;
let head: { seq: number; hash: string; commits: number };
const commits: string[] = [];
const eventIds: string[] = [];

beforeAll(async () => {
  dir = tempDir("outboxd-verify-");
  original = join(dir, "original.db");
  const server = await startServer({ OUTBOXD_DATABASE_URL: `file:${original}` }, { dispatch: false });
  const steps = [
    {
      records: [{ collection: "a", id: "1", data: { status: "open", email: "x@example.com" } }],
      events: [{ type: "a.opened", payload: { n: 1 } }],
    },
    {
      records: [{ collection: "a", id: "1", expectedVersion: 1, data: { status: "approved" } }],
      events: [
        { type: "a.approved", payload: { n: 2 } },
        { type: "a.noted", payload: { n: 3 } },
      ],
    },
    {
      records: [{ collection: "b", id: "1", data: { v: 1 } }],
      events: [{ type: "b.created", payload: { n: 4 } }],
    },
    { records: [{ collection: "b", id: "1", data: { v: 2 } }] },
    { records: [{ collection: "a", id: "1", delete: true }] },
  ];
  for (const body of steps) {
    const answer = await server.request("POST", "/v1/commits", body);
    expect(answer.status).toBe(201);
    commits.push(answer.body.commitId);
    eventIds.push(...answer.body.events.map((e: { id: string }) => e.id));
  }
  const ledger = await server.request("GET", "/v1/ledger");
  head = { seq: ledger.body.head.seq, hash: ledger.body.head.hash, commits: ledger.body.commits };
  await server.stop();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A copy of the intact database, tampered with by `sql` through a connection of the test's own. */
function tampered(name: string, ...sql: string[]): string {
  const file = join(dir, `${name}.db`);
  copyFileSync(original, file);
  if (existsSync(`${original}-wal`)) copyFileSync(`${original}-wal`, `${file}-wal`);
  const db = new Database(file);
  for (const statement of sql) db.exec(statement);
  db.close();
  return file;
}

test("an intact database verifies: exit 0, the commit count and the head the API shows", () => {
  const run = outboxd(["verify"], tampered("intact"));
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout.split("\n")[0]).toBe(`ok: ${head.commits} commits, head ${head.hash}`);
  // A new database has no genesis commit: its first commit is seq 0.
  expect(head.commits).toBe(commits.length);
});

const digest = (value: unknown) => createHash("sha256").update(canonicalJson(value)).digest("hex");

const cases: [name: string, sql: () => string[], commit: () => string, what: () => RegExp][] = [
  [
    "a version's data edited",
    () => [`UPDATE record_versions SET data = '{"status":"rejected"}' WHERE commit_id = '${commits[1]}'`],
    () => commits[1] as string,
    () => /version 2 of a\/1 was edited/,
  ],
  [
    "an event's payload edited",
    () => [`UPDATE events SET payload = '{"n":30}' WHERE id = '${eventIds[2]}'`],
    () => commits[1] as string,
    () => new RegExp(`event ${eventIds[2]} was edited`),
  ],
  [
    "an event deleted",
    () => [`DELETE FROM events WHERE id = '${eventIds[1]}'`],
    () => commits[1] as string,
    () => /1 event was removed/,
  ],
  [
    "an event added to a commit that sent none",
    () => [
      // Commit 3 (b/1's version 2) sent no event; this one names it, with a well-formed digest.
      `INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id, payload_digest)
       VALUES ('0193a1f2-0000-7000-8000-0000000000ff', 'b.forged', 'b/1', 9, '{"n":9}', 0, 1, '${commits[3]}',
         '${digest({ n: 9 })}')`,
    ],
    () => commits[3] as string,
    () => /event 0193a1f2-0000-7000-8000-0000000000ff was added/,
  ],
  [
    "an erased event's payload forged",
    () => [`UPDATE events SET payload = '{"n":30}', erased_at = 1 WHERE id = '${eventIds[2]}'`],
    () => commits[1] as string,
    () => new RegExp(`event ${eventIds[2]} was edited: it is marked erased, but its payload is not null`),
  ],
  [
    "an event without a digest added to a commit that sent none",
    () => [
      `INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id)
       VALUES ('0193a1f2-0000-7000-8000-0000000000fe', 'b.forged', 'b/1', 9, '{"n":9}', 0, 1, '${commits[3]}')`,
    ],
    () => commits[3] as string,
    () => /event 0193a1f2-0000-7000-8000-0000000000fe was added/,
  ],
  [
    "an event without a digest added after the events of a commit that sent some",
    () => [
      `INSERT INTO events (id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id)
       VALUES ('0193a1f2-0000-7000-8000-0000000000fd', 'a.forged', 'a/1', 9, '{"n":9}', 0, 1, '${commits[1]}')`,
    ],
    () => commits[1] as string,
    () => /event 0193a1f2-0000-7000-8000-0000000000fd was added/,
  ],
  [
    "a commit deleted",
    () => [`DELETE FROM commits WHERE id = '${commits[2]}'`],
    () => commits[2] as string,
    () => /removed/,
  ],
  [
    "two commits reordered",
    () => [
      `UPDATE commits SET seq = -1 WHERE id = '${commits[1]}'`,
      `UPDATE commits SET seq = 1 WHERE id = '${commits[2]}'`,
      `UPDATE commits SET seq = 2 WHERE id = '${commits[1]}'`,
    ],
    () => commits[2] as string,
    () => /hash does not match/,
  ],
  [
    "a version's data and digest both forged",
    () => [
      // b/1's version 2 is its current one: it lives in the records row.
      `UPDATE records SET data = '{"v":9}', data_digest = '${digest({ v: 9 })}' WHERE commit_id = '${commits[3]}'`,
    ],
    () => commits[3] as string,
    () => /hash does not match/,
  ],
  [
    "a record's current state edited",
    () => [`UPDATE records SET data = '{"v":3}' WHERE collection = 'b' AND id = '1'`],
    () => commits[3] as string,
    () => /record b\/1 was edited/,
  ],
  [
    "the head commit deleted",
    () => [`DELETE FROM commits WHERE id = '${commits[4]}'`],
    () => commits[4] as string,
    () => /removed/,
  ],
];

for (const [name, sql, commit, what] of cases) {
  test(`${name}: exit 1 naming the first bad commit and what differs`, () => {
    const run = outboxd(["verify"], tampered(name.replaceAll(/\W+/g, "-"), ...sql()));
    expect(run.code).toBe(1);
    const line = run.stdout.trim();
    expect(line.startsWith(`FAILED: ${commit()}`)).toBe(true);
    expect(line).toMatch(what());
  });
}

test("an event outside the chain placed before its first event fails on a database created with the ledger", () => {
  // pos 0 comes before every chained event; the commit it names does not exist.
  const file = tampered(
    "unchained-first",
    `INSERT INTO events (pos, id, type, aggregate, sequence, payload, occurred_at, deliver_by, commit_id)
     VALUES (0, '0193a1f2-0000-7000-8000-0000000000fc', 'a.forged', 'a/1', 99, '{"n":9}', 0, 1, 'cmt_gone')`,
  );
  const run = outboxd(["verify"], file);
  expect(run.code).toBe(1);
  expect(run.stdout.trim()).toMatch(
    /^FAILED: event 0193a1f2-0000-7000-8000-0000000000fc was added outside any commit of the chain/,
  );
});

test("erased personal data is reported as erased, and the chain still verifies", () => {
  const file = tampered("erased");
  const refused = outboxd(["erase", "--record", "b/1", "--version", "2"], file);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("current data");
  expect(outboxd(["erase", "--record", "a/1", "--version", "1"], file).code).toBe(0);
  expect(outboxd(["erase", "--event", eventIds[0] as string], file).code).toBe(0);
  const db = new Database(file);
  const version = db
    .prepare("SELECT data FROM record_versions WHERE collection = 'a' AND id = '1' AND version = 1")
    .get() as {
    data: string | null;
  };
  db.close();
  expect(version.data).toBeNull();
  const run = outboxd(["verify"], file);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`ok: ${head.commits} commits, head ${head.hash}`);
  expect(run.stdout).toContain("erased: 1 versions, 1 event payloads");
});

test("an anchor recorded earlier must still be in the chain", () => {
  const file = tampered("anchored");
  expect(outboxd(["verify", "--anchor", `${head.seq}:${head.hash}`], file).code).toBe(0);
  const wrong = outboxd(["verify", "--anchor", `${head.seq}:${"0".repeat(64)}`], file);
  expect(wrong.code).toBe(1);
  expect(wrong.stdout).toContain("rewritten");
  expect(outboxd(["verify", "--anchor", "nonsense"], file).code).toBe(2);
});

test("the chain survives outboxd backup and a restore, and grows on from there", async () => {
  const live = tampered("live");
  const copy = join(dir, "backup.db");
  expect(outboxd(["backup", copy], live).code).toBe(0);
  const verified = outboxd(["verify"], copy);
  expect(verified.code).toBe(0);
  expect(verified.stdout.split("\n")[0]).toBe(`ok: ${head.commits} commits, head ${head.hash}`);
  // Restore: a server started on the copy continues the same chain.
  const server = await startServer({ OUTBOXD_DATABASE_URL: `file:${copy}` }, { dispatch: false });
  try {
    const answer = await server.request("PUT", "/v1/records/c/1", { data: { after: "restore" } });
    expect(answer.status).toBe(201);
    const links = await server.request("GET", `/v1/ledger/commits?after=${head.seq}`);
    expect(links.body.data).toHaveLength(1);
    expect(links.body.data[0]).toMatchObject({
      seq: head.seq + 1,
      previousHash: head.hash,
      commitId: answer.body.commitId,
    });
  } finally {
    await server.stop();
  }
  expect(outboxd(["verify"], copy).stdout).toContain(`ok: ${head.commits + 1} commits`);
});
