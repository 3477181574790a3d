// Operator commands run as real child processes against a database a server filled.
import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./helpers/process.ts";
import { startServer, type TestServer, tempDir } from "./helpers/server.ts";
import { Database } from "./helpers/sqlite.ts";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function outboxd(args: string[], databaseUrl: string) {
  const run = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", OUTBOXD_DATABASE_URL: databaseUrl, OUTBOXD_LOG_LEVEL: "error" },
  });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** A stopped server's database holding one record and `dead` dead deliveries. */
async function databaseWithDeadLetters(dead: number): Promise<{ dir: string; url: string }> {
  const dir = tempDir("outboxd-cli-");
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const url = `file:${join(dir, "outboxd.db")}`;
  const server: TestServer = await startServer({ OUTBOXD_DATABASE_URL: url }, { dispatch: false });
  const endpoint = await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/hook" });
  const commit = await server.request("POST", "/v1/commits", {
    records: [{ collection: "orders", id: "o-1", data: { total: 10 } }],
    events: Array.from({ length: dead }, (_, i) => ({ type: "order.changed", payload: { i } })),
  });
  expect(commit.status).toBe(201);
  await server.stop();
  // Move them to the dead-letter queue as the deadline sweep would.
  const db = new Database(join(dir, "outboxd.db"));
  db.prepare(
    "UPDATE deliveries SET status = 'dead', dead_reason = 'deadline_exceeded', dead_at = 1 WHERE endpoint_id = ?",
  ).run(endpoint.body.id);
  db.close();
  return { dir, url };
}

test("replay --status dead puts every dead delivery back to pending and prints the count", async () => {
  const { url, dir } = await databaseWithDeadLetters(3);
  const run = outboxd(["replay", "--status", "dead", "--reason", "deadline_exceeded"], url);
  expect(run.code).toBe(0);
  expect(run.stdout.trim()).toBe("replayed 3");
  expect(run.stderr).toContain("3/3");
  const db = new Database(join(dir, "outboxd.db"));
  const rows = db.prepare("SELECT status, attempt_count AS attempts FROM deliveries").all() as {
    status: string;
    attempts: number;
  }[];
  db.close();
  expect(rows).toHaveLength(3);
  expect(rows.every((r) => r.status === "pending" && r.attempts === 0)).toBe(true);
  // Nothing left to replay: a script can rely on the count.
  expect(outboxd(["replay", "--status", "dead"], url).stdout.trim()).toBe("replayed 0");
});

test("replay refuses anything but --status dead with exit code 2", async () => {
  const { url } = await databaseWithDeadLetters(1);
  const run = outboxd(["replay", "--status", "pending"], url);
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("--status dead");
});

test("replay --within refuses a zero, negative, unreadable or absurd window with exit code 2, changing nothing", async () => {
  const { dir, url } = await databaseWithDeadLetters(1);
  for (const within of ["0s", "0ms", "-5m", "soon", "99999999999999d"]) {
    const run = outboxd(["replay", "--status", "dead", "--within", within], url);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--within (must be a positive duration|is too far in the future)/);
  }
  // The API's rule, shared: the delivery stayed dead instead of coming back with deadline = now.
  const db = new Database(join(dir, "outboxd.db"));
  expect(db.prepare("SELECT status FROM deliveries").all()).toEqual([{ status: "dead" }]);
  db.close();
  const ok = outboxd(["replay", "--status", "dead", "--within", "1h"], url);
  expect(ok.code).toBe(0);
  expect(ok.stdout.trim()).toBe("replayed 1");
});

test("stats prints the outbox's state as a table", async () => {
  const { url } = await databaseWithDeadLetters(2);
  const run = outboxd(["stats"], url);
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/^dead\s+2$/m);
  expect(run.stdout).toMatch(/^deadlineExceededTotal\s+0$/m);
});

test("backup writes a consistent copy that a new server serves", async () => {
  const { url, dir } = await databaseWithDeadLetters(1);
  const copy = join(dir, "backup.db");
  const run = outboxd(["backup", copy], url);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(copy);
  // Restore: a server on the copy has the record.
  const restored = await startServer({ OUTBOXD_DATABASE_URL: `file:${copy}` }, { dispatch: false });
  cleanup.push(() => restored.stop());
  const record = await restored.request("GET", "/v1/records/orders/o-1");
  expect(record.status).toBe(200);
  expect(record.body.data).toEqual({ total: 10 });
  // A backup never overwrites a file.
  expect(outboxd(["backup", copy], url).code).toBe(2);
});

test("token list shows tokens without secrets; revoke revokes", async () => {
  const { url } = await databaseWithDeadLetters(0);
  const created = outboxd(["token", "create", "--name", "ci", "--scopes", "read"], url);
  expect(created.code).toBe(0);
  const secret = created.stdout.trim();
  const listed = outboxd(["token", "list"], url);
  expect(listed.stdout).toContain("ci");
  expect(listed.stdout).not.toContain(secret);
  const id = /tok_[0-9a-z]+/.exec(listed.stdout)?.[0] as string;
  expect(outboxd(["token", "revoke", id], url).code).toBe(0);
  expect(outboxd(["token", "list"], url).stdout).toMatch(/\d{4}-\d\d-\d\dT[\d:.]+Z\s*$/m);
  expect(outboxd(["token", "revoke", id], url).code).toBe(2);
});

test("prune keeps pending and dead deliveries", async () => {
  const { url } = await databaseWithDeadLetters(2);
  const run = outboxd(["prune"], url);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("pruned 0 delivered deliveries");
  expect(outboxd(["stats"], url).stdout).toMatch(/^dead\s+2$/m);
});
