// The command line (src/main.ts) as real child processes of the bun running the tests: exit
// codes, what goes to stdout and stderr, and `serve` answering until SIGTERM.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REMOVED_SETTINGS } from "../src/config.ts";
import { expectProblem, expectStatus } from "./helpers/assertions.ts";
import { type Child, REPO, startChild } from "./helpers/process.ts";
import { startServer, type TestServer, tempDir } from "./helpers/server.ts";

const dirs: string[] = [];
const children: Child[] = [];
const servers: TestServer[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
  for (const server of servers.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = tempDir("outboxd-cli-");
  dirs.push(dir);
  return dir;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `bun src/main.ts ARGS` to completion with only `env` (plus PATH and HOME) set. */
async function outboxd(args: string[], env: Record<string, string>): Promise<Run> {
  const proc = Bun.spawn({
    cmd: [process.execPath, "src/main.ts", ...args],
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

const databaseUrl = (dir: string) => `file:${join(dir, "data", "x.db")}`;

describe("migrate", () => {
  test("applies the migrations to a fresh file, then says the database is up to date", async () => {
    const dir = freshDir();
    const env = { OUTBOXD_DATABASE_URL: databaseUrl(dir) };
    const first = await outboxd(["migrate"], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("applied");
    expect(first.stdout).toContain("0000_init");
    const second = await outboxd(["migrate"], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("up to date");
    expect(second.stdout).not.toContain("0000_init");
  });
});

describe("token create", () => {
  test("prints only the token on stdout, and that token authenticates with its scopes", async () => {
    const dir = freshDir();
    const env = { OUTBOXD_DATABASE_URL: databaseUrl(dir) };
    const created = await outboxd(["token", "create", "--name", "ci", "--scopes", "read"], env);
    expect(created.code).toBe(0);
    // The agents' and consumers' scope names are accepted too (DESIGN §3, Scopes).
    const agent = await outboxd(
      ["token", "create", "--name", "agent", "--scopes", "propose,approve,consume"],
      env,
    );
    expect(agent.code).toBe(0);
    expect(created.stdout).toMatch(/^otk_[A-Za-z0-9_-]+\n$/);
    const token = created.stdout.trim();
    expect(created.stderr).toContain("tok_");
    expect(created.stderr).not.toContain(token);

    const server = await startServer({ OUTBOXD_DATABASE_URL: env.OUTBOXD_DATABASE_URL }, { dispatch: false });
    servers.push(server);
    const as = { authorization: `Bearer ${token}` };
    expectStatus(await server.request("GET", "/v1/events", undefined, as), 200);
    expectProblem(await server.request("POST", "/v1/commits", { events: [] }, as), 403);
    const listed = expectStatus(await server.request("GET", "/v1/tokens"), 200).data;
    expect(listed.map((t: { name: string; scopes: string[] }) => [t.name, t.scopes])).toEqual([
      ["agent", ["propose", "approve", "consume"]],
      ["ci", ["read"]],
    ]);
  });

  test("usage errors exit 2 and create nothing", async () => {
    const dir = freshDir();
    const env = { OUTBOXD_DATABASE_URL: databaseUrl(dir) };
    for (const args of [
      ["token", "create", "--scopes", "read"],
      ["token", "create", "--name", "ci", "--scopes", "root"],
      ["token", "create", "--name", "ci"],
      ["token", "create", "--name"],
      ["token", "frobnicate"],
      ["frobnicate"],
    ]) {
      const run = await outboxd(args, env);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stdout).toBe("");
      expect(run.stderr.trim().length).toBeGreaterThan(0);
    }
  });
});

describe("configuration errors exit 2 naming the variable", () => {
  test.each([
    [
      "a lease not longer than the send timeout",
      { OUTBOXD_LEASE: "5s", OUTBOXD_SEND_TIMEOUT: "15s" },
      "OUTBOXD_LEASE",
    ],
    ["a PORT that is not a number", { PORT: "abc" }, "PORT=abc"],
    ["a duration without a unit", { OUTBOXD_BUSY_TIMEOUT: "5" }, "OUTBOXD_BUSY_TIMEOUT=5"],
    ["an unknown synchronous mode", { OUTBOXD_SYNCHRONOUS: "OFF" }, "OUTBOXD_SYNCHRONOUS=OFF"],
    ["a short admin token", { OUTBOXD_ADMIN_TOKEN: "short" }, "OUTBOXD_ADMIN_TOKEN"],
  ])("%s", async (_name, bad, variable) => {
    const dir = freshDir();
    for (const command of ["serve", "migrate"]) {
      const run = await outboxd([command], { OUTBOXD_DATABASE_URL: databaseUrl(dir), ...bad });
      expect({ command, code: run.code }).toEqual({ command, code: 2 });
      expect(run.stderr).toContain("Invalid configuration");
      expect(run.stderr).toContain(variable);
      expect(run.stderr).not.toContain("    at "); // a message, not a stack trace
    }
  });
});

test("every removed setting still set is refused at start: exit 2, one line naming it and what replaced it", async () => {
  const dir = freshDir();
  const names = Object.keys(REMOVED_SETTINGS);
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) {
    const run = await outboxd(["serve"], { OUTBOXD_DATABASE_URL: databaseUrl(dir), [name]: "1" });
    expect({ name, code: run.code }).toEqual({ name, code: 2 });
    const line = run.stderr.split("\n").find((l) => l.includes(name));
    expect(line).toContain(`${name} is no longer a setting: ${REMOVED_SETTINGS[name]}`);
    expect(run.stderr).not.toContain("    at ");
  }
  // Refused before anything is created.
  expect(existsSync(join(dir, "data"))).toBe(false);
});

describe("serve", () => {
  test("listens on PORT, answers /healthz, and exits 0 on SIGTERM", async () => {
    const dir = freshDir();
    const child = startChild([process.execPath, "src/main.ts", "serve"], {
      PORT: "0",
      OUTBOXD_DATABASE_URL: databaseUrl(dir),
      OUTBOXD_ADMIN_TOKEN: `cli-admin-${crypto.randomUUID()}`,
    });
    children.push(child);
    const url = await child.listening();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toEndWith(":0");
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    expect(child.stderr()).toContain('"msg":"shutting down"');
  });

  test("a first start writes admin-token beside the database and logs only its path", async () => {
    const dir = freshDir();
    const child = startChild([process.execPath, "src/main.ts", "serve"], {
      PORT: "0",
      OUTBOXD_DATABASE_URL: databaseUrl(dir),
    });
    children.push(child);
    const url = await child.listening();
    const path = join(dir, "data", "admin-token");
    const token = readFileSync(path, "utf8").trim();
    expect(child.stderr()).toContain(path);
    expect(child.stderr()).not.toContain(token);
    const tokens = await fetch(`${url}/v1/tokens`, { headers: { authorization: `Bearer ${token}` } });
    expect(tokens.status).toBe(200);
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
  });
});
