// The command line's front door (DESIGN §8) as real child processes in temp directories:
// `--help` and `--version` touch nothing, commands that must not create a database refuse a
// place without one, an unknown endpoint is a usage error, a busy port is one line.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./helpers/process.ts";
import { startServer, type TestServer, tempDir } from "./helpers/server.ts";
import { startSqld } from "./helpers/sqld.ts";
import { Database } from "./helpers/sqlite.ts";

const dirs: string[] = [];
const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = tempDir("outboxd-front-");
  dirs.push(dir);
  return dir;
}

/** `bun src/main.ts ARGS` run in `cwd` with only `env` (plus PATH and HOME). */
async function outboxd(args: string[], cwd: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn({
    cmd: [process.execPath, join(REPO, "src/main.ts"), ...args],
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // A command that bound a port or kept running would not exit: the deadline is the failure.
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const COMMANDS = [
  ["serve"],
  ["dispatch"],
  ["migrate"],
  ["stats"],
  ["replay", "--status", "dead"],
  ["token", "create", "--name", "x", "--scopes", "read"],
  ["token", "list"],
  ["token", "revoke", "tok_x"],
  ["prune"],
  ["backup"],
  ["verify"],
  ["erase", "--event", "evt_x"],
  ["rotate-master-key"],
  ["mcp"],
  ["listen"],
];

describe("--help and --version", () => {
  test.each(
    COMMANDS.flatMap((c) => [
      [...c, "--help"],
      [...c, "-h"],
    ]).map((c) => [c.join(" "), c]),
  )("%s prints the command's usage, exits 0 and creates nothing", async (_name, args) => {
    const dir = freshDir();
    const run = await outboxd(args as string[], dir, { PORT: "0" });
    expect(run.code).toBe(0);
    expect(run.stdout).toStartWith(`Usage: outboxd ${(args as string[])[0]}`);
    expect(run.stderr).toBe("");
    // No data/ folder, no file named --help, no database anywhere.
    expect(readdirSync(dir)).toEqual([]);
  });

  test("backup --help writes no file named --help", async () => {
    const dir = freshDir();
    const run = await outboxd(["backup", "--help"], dir);
    expect(run.code).toBe(0);
    expect(existsSync(join(dir, "--help"))).toBe(false);
  });

  test("--version prints the package's version; --help lists every command", async () => {
    const dir = freshDir();
    const { version } = await Bun.file(join(REPO, "package.json")).json();
    const run = await outboxd(["--version"], dir);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(`outboxd ${version}`);
    const help = await outboxd(["--help"], dir);
    expect(help.code).toBe(0);
    for (const [command] of COMMANDS) expect(help.stdout).toContain(`  ${command}`);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("no database there", () => {
  const refusing = COMMANDS.filter(
    ([command, sub]) =>
      !["serve", "migrate", "mcp", "listen"].includes(command as string) &&
      !(command === "token" && sub === "create"),
  ).map((args) => (args[0] === "backup" ? [...args, "copy.db"] : args));

  test.each(refusing.map((c) => [c.join(" "), c]))(
    "%s exits 2 with one line naming the path and OUTBOXD_DATABASE_URL, and creates nothing",
    async (_name, args) => {
      const dir = freshDir();
      const run = await outboxd(args as string[], dir, {
        OUTBOXD_NEW_MASTER_KEY: Buffer.alloc(32, 1).toString("base64"),
      });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      const lines = run.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(join(dir, "data", "outboxd.db"));
      expect(lines[0]).toContain("OUTBOXD_DATABASE_URL");
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  test("a SQLite file without outboxd's migrations is no outboxd database either", async () => {
    const dir = freshDir();
    const file = join(dir, "other.db");
    const sqlite = new Database(file);
    sqlite.exec("CREATE TABLE t (x)");
    sqlite.close();
    const run = await outboxd(["verify"], dir, { OUTBOXD_DATABASE_URL: `file:${file}` });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no outboxd database at ${file}`);
  });

  test("serve, migrate and token create may create one", async () => {
    const dir = freshDir();
    const migrated = await outboxd(["migrate"], dir);
    expect(migrated.code).toBe(0);
    expect(existsSync(join(dir, "data", "outboxd.db"))).toBe(true);
    const other = freshDir();
    const created = await outboxd(["token", "create", "--name", "ci", "--scopes", "read"], other);
    expect(created.code).toBe(0);
    const verified = await outboxd(["verify"], other);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toStartWith("ok: ");
  });

  test("a libSQL server without outboxd's migrations: exit 2 naming its URL without credentials", async () => {
    const sqld = await startSqld();
    try {
      const dir = freshDir();
      const url = `${sqld.url.replace("http://", "http://user:secret-password@")}?authToken=secret-token`;
      const run = await outboxd(["stats"], dir, { OUTBOXD_DATABASE_URL: url });
      expect(run.code).toBe(2);
      expect(run.stderr.trim()).toStartWith(`no outboxd database at ${sqld.url}:`);
      expect(run.stderr).toContain("OUTBOXD_DATABASE_URL");
      expect(run.stderr).not.toContain("secret");
      // Once migrated, the same command works.
      expect((await outboxd(["migrate"], dir, { OUTBOXD_DATABASE_URL: sqld.url })).code).toBe(0);
      expect((await outboxd(["stats"], dir, { OUTBOXD_DATABASE_URL: sqld.url })).code).toBe(0);
    } finally {
      await sqld.stop();
    }
  });

  test("the file named in OUTBOXD_DATABASE_URL is the one named", async () => {
    const dir = freshDir();
    const run = await outboxd(["stats"], dir, { OUTBOXD_DATABASE_URL: `file:${join(dir, "typo.db")}` });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(join(dir, "typo.db"));
    expect(existsSync(join(dir, "typo.db"))).toBe(false);
  });
});

test("replay --endpoint with an unknown id exits 2 naming it", async () => {
  const dir = freshDir();
  expect((await outboxd(["migrate"], dir)).code).toBe(0);
  const run = await outboxd(["replay", "--status", "dead", "--endpoint", "ep_bogus"], dir);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe("");
  expect(run.stderr.trim()).toContain("ep_bogus");
});

test("a busy port: one line naming the port and PORT, exit 1, no stack trace", async () => {
  const dir = freshDir();
  const server = await startServer({}, { dispatch: false });
  servers.push(server);
  const port = new URL(server.url).port;
  const run = await outboxd(["serve"], dir, { PORT: port, OUTBOXD_LOG_LEVEL: "error" });
  expect(run.code).toBe(1);
  const lines = run.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`port ${port}`);
  expect(lines[0]).toContain("PORT");
  expect(run.stderr).not.toContain("    at ");
});
