// Secrets (DESIGN §2, §3, §8): API tokens only as hashes, compared in constant time; endpoint
// signing secrets sealed at rest with OUTBOXD_MASTER_KEY, shown only on create, rotate and the
// admin secret route, never echoed by an error; `outboxd rotate-master-key` re-seals them.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { Authenticator } from "../../src/auth/authenticator.ts";
import { SecretBox } from "../../src/endpoints/secrets.ts";
import { createLogger } from "../../src/ops/log.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { REPO } from "../helpers/process.ts";
import { startReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

const KEY_A = Buffer.alloc(32, 0xa1).toString("base64");
const KEY_B = Buffer.alloc(32, 0xb2).toString("base64");
/** A known signing secret, so tests can look for its bytes. */
const SECRET = `whsec_${Buffer.alloc(32, 0x5c).toString("base64")}`;
const SECRET_KEY_PART = SECRET.slice("whsec_".length);

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function dbPath(server: TestServer | { dir: string }): string {
  return join(server.dir, "outboxd.db");
}

/** Every endpoints.secrets value, read through SQLite (WAL included). */
function storedSecrets(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare("SELECT secrets FROM endpoints ORDER BY id").all() as { secrets: string }[]).map(
      (r) => r.secrets,
    );
  } finally {
    db.close();
  }
}

/** The raw bytes of the database file and its WAL, as someone who copied them would see them. */
function rawFiles(path: string): Buffer {
  return Buffer.concat([path, `${path}-wal`].filter(existsSync).map((p) => readFileSync(p)));
}

describe("API tokens", () => {
  test("the env admin token matches only exactly", async () => {
    const server = await startServer({}, { dispatch: false });
    cleanup.push(() => server.stop());
    const auth = new Authenticator(server.outboxd.db, server.token, Date.now);
    expect((await auth.authenticate(server.token))?.scopes).toEqual(["admin"]);
    for (const near of [server.token.slice(0, -1), `${server.token} `, server.token.toUpperCase(), ""]) {
      expect(await auth.authenticate(near)).toBeUndefined();
    }
  });
});

describe("endpoint secrets at rest", () => {
  test("with OUTBOXD_MASTER_KEY: sealed with AES-GCM; neither the column nor the raw file holds the secret", async () => {
    const lines: string[] = [];
    const server = await startServer(
      { OUTBOXD_MASTER_KEY: KEY_A },
      { dispatch: false, logger: createLogger("info", (l) => lines.push(l)) },
    );
    cleanup.push(() => server.stop());
    const created = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/a", secret: SECRET }),
      201,
    );
    expect(created.secret).toBe(SECRET);
    const rotated = expectStatus(
      await server.request("POST", `/v1/endpoints/${created.id}/rotate-secret`),
      200,
    ).secret;
    expectStatus(await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/b" }), 201);

    const stored = storedSecrets(dbPath(server));
    expect(stored).toHaveLength(2);
    for (const value of stored) {
      expect(value).toStartWith("aesgcm:");
      expect(value).not.toContain("whsec_");
      expect(value).not.toContain(SECRET_KEY_PART);
    }
    const raw = rawFiles(dbPath(server));
    for (const needle of ["whsec_", SECRET_KEY_PART, rotated.slice(6)])
      expect(raw.includes(needle)).toBe(false);
    // The sealed list opens with the key, and only with it.
    const opened = new SecretBox(KEY_A).open(stored[1] === undefined ? "" : (stored.find(Boolean) as string));
    expect(opened.map((s) => s.secret).some((s) => s === SECRET || s === rotated)).toBe(true);
    expect(() => new SecretBox(KEY_B).open(stored[0] as string)).toThrow();
    expect(() => new SecretBox(undefined).open(stored[0] as string)).toThrow("OUTBOXD_MASTER_KEY");
    expect(lines.join("")).not.toContain("stored unencrypted");
  });

  test("without OUTBOXD_MASTER_KEY: stored as plain JSON, and the start says so with a warning", async () => {
    const lines: string[] = [];
    const server = await startServer(
      { OUTBOXD_MASTER_KEY: "" },
      { dispatch: false, logger: createLogger("info", (l) => lines.push(l)) },
    );
    cleanup.push(() => server.stop());
    const warning = lines.map((l) => JSON.parse(l)).find((l) => l.msg.includes("OUTBOXD_MASTER_KEY"));
    expect(warning).toMatchObject({ level: "warn" });
    expect(warning.msg).toContain("unencrypted");

    expectStatus(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/a", secret: SECRET }),
      201,
    );
    const [stored] = storedSecrets(dbPath(server));
    expect(stored).toContain(SECRET);
    expect(JSON.parse(stored as string)).toEqual([{ secret: SECRET, expiresAt: null }]);
  });
});

describe("secrets are shown only on create, rotate and GET …/secret (admin)", () => {
  let server: TestServer;
  let id = "";
  let readToken = "";
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
    id = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/s", secret: SECRET }),
      201,
    ).id;
    readToken = expectStatus(
      await server.request("POST", "/v1/tokens", { name: "r", scopes: ["read"] }),
      201,
    ).token;
  });
  afterAll(async () => {
    await server.stop();
  });

  test("no other endpoint answer carries a secret", async () => {
    const answers = [
      await server.request("GET", "/v1/endpoints"),
      await server.request("GET", `/v1/endpoints/${id}`),
      await server.request("PATCH", `/v1/endpoints/${id}`, { description: "d" }),
      await server.request("POST", `/v1/endpoints/${id}/enable`),
      await server.request("GET", "/v1/stats"),
      await server.request("GET", "/metrics"),
      await server.request("GET", "/v1/endpoints", undefined, { authorization: `Bearer ${readToken}` }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const text = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
      expect(text).not.toContain("whsec_");
      expect(text).not.toContain(SECRET_KEY_PART);
      expect(text).not.toContain("aesgcm:");
    }
  });

  test("GET …/secret gives the current and unexpired previous secrets, to admin only", async () => {
    expect(expectStatus(await server.request("GET", `/v1/endpoints/${id}/secret`), 200)).toEqual({
      secret: SECRET,
      previous: [],
    });
    const denied = await server.request("GET", `/v1/endpoints/${id}/secret`, undefined, {
      authorization: `Bearer ${readToken}`,
    });
    expect(JSON.stringify(expectProblem(denied, 403))).not.toContain("whsec_");
  });

  test("errors never echo a secret back", async () => {
    const unquoted = `{"url": "http://127.0.0.1:9/x", "secret": ${SECRET.replace(/[+/=]/g, "x")}}`;
    const malformed = await server.request("POST", "/v1/endpoints", unquoted);
    const bad = expectProblem(malformed, 400);
    expect(JSON.stringify(bad)).not.toContain("whsec_");
    expect(bad.detail).toStartWith("the body is not valid JSON");

    const weak = "whsec_c2hvcnQ=";
    const invalid = expectProblem(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/x", secret: weak }),
      422,
      "/secret",
    );
    expect(JSON.stringify(invalid)).not.toContain(weak);

    const wrongToken = "otk_this-token-does-not-exist-but-must-not-be-echoed";
    const unauthorized = expectProblem(
      await server.request("GET", "/v1/events", undefined, { authorization: `Bearer ${wrongToken}` }),
      401,
    );
    expect(JSON.stringify(unauthorized)).not.toContain(wrongToken);
  });
});

describe("outboxd rotate-master-key (a child process)", () => {
  function rotate(databaseUrl: string, env: Record<string, string>, args: string[] = []) {
    const run = Bun.spawnSync([process.execPath, "src/main.ts", "rotate-master-key", ...args], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH ?? "",
        OUTBOXD_DATABASE_URL: databaseUrl,
        OUTBOXD_LOG_LEVEL: "error",
        ...env,
      },
    });
    return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
  }

  /** A stopped server's database with `count` endpoints (the first one with SECRET), sealed with `key`. */
  async function databaseWithEndpoints(key: string, count: number): Promise<{ dir: string; url: string }> {
    const dir = tempDir("outboxd-rotate-");
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const url = `file:${join(dir, "outboxd.db")}`;
    const server = await startServer(
      { OUTBOXD_DATABASE_URL: url, OUTBOXD_MASTER_KEY: key },
      { dispatch: false },
    );
    for (let i = 0; i < count; i++) {
      expectStatus(
        await server.request("POST", "/v1/endpoints", {
          url: `http://127.0.0.1:9/${i}`,
          ...(i === 0 ? { secret: SECRET } : {}),
        }),
        201,
      );
    }
    await server.stop();
    return { dir, url };
  }

  test("re-seals every endpoint with the new key in one go; the server then signs with the same secret", async () => {
    const { dir, url } = await databaseWithEndpoints(KEY_A, 3);
    const before = storedSecrets(join(dir, "outboxd.db"));
    const run = rotate(url, { OUTBOXD_MASTER_KEY: KEY_A, OUTBOXD_NEW_MASTER_KEY: KEY_B });
    expect(run.stderr).toContain("OUTBOXD_MASTER_KEY set to the new key");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("re-sealed 3 endpoints");
    expect(`${run.stdout}${run.stderr}`).not.toContain(KEY_B);

    const after = storedSecrets(join(dir, "outboxd.db"));
    expect(after).toHaveLength(3);
    after.forEach((sealed, i) => {
      expect(sealed).toStartWith("aesgcm:");
      expect(sealed).not.toBe(before[i]);
      expect(new SecretBox(KEY_B).open(sealed)).toEqual(new SecretBox(KEY_A).open(before[i] as string));
      expect(() => new SecretBox(KEY_A).open(sealed)).toThrow();
    });

    // A server with the new key delivers, signed with the secret the receiver has always had.
    const receiver = startReceiver();
    cleanup.push(() => receiver.stop());
    const server = await startServer({ OUTBOXD_DATABASE_URL: url, OUTBOXD_MASTER_KEY: KEY_B });
    cleanup.push(() => server.stop());
    const endpoint = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: receiver.url, secret: SECRET }),
      201,
    );
    const old = expectStatus(await server.request("GET", "/v1/endpoints?limit=500"), 200).data.find(
      (e: { url: string }) => e.url === "http://127.0.0.1:9/0",
    );
    // Point the rotated endpoint at the receiver, then send to it alone.
    expectStatus(await server.request("PATCH", `/v1/endpoints/${old.id}`, { url: receiver.url }), 200);
    expectStatus(await server.request("DELETE", `/v1/endpoints/${endpoint.id}`), 200);
    expect(expectStatus(await server.request("GET", `/v1/endpoints/${old.id}/secret`), 200).secret).toBe(
      SECRET,
    );
    expectStatus(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "rotated.key", aggregate: "keys/1", endpoints: [old.id], payload: { ok: true } }],
      }),
      201,
    );
    const [request] = await waitFor("the webhook", () => receiver.received.length > 0 && receiver.received);
    if (!request) throw new Error("no webhook");
    const headers = Object.fromEntries(request.headers.entries());
    expect(new Webhook(SECRET).verify(request.body, headers)).toMatchObject({ type: "rotated.key" });
  });

  test("encrypts for the first time when there was no key, and --decrypt stores them plain again", async () => {
    const { dir, url } = await databaseWithEndpoints("", 2);
    expect(storedSecrets(join(dir, "outboxd.db"))[0]).toContain(SECRET);

    const sealed = rotate(url, { OUTBOXD_NEW_MASTER_KEY: KEY_B });
    expect(sealed.code).toBe(0);
    expect(sealed.stdout.trim()).toBe("re-sealed 2 endpoints");
    const stored = storedSecrets(join(dir, "outboxd.db"));
    for (const value of stored) expect(value).toStartWith("aesgcm:");
    expect(rawFiles(join(dir, "outboxd.db")).includes(SECRET_KEY_PART)).toBe(false);

    const plain = rotate(url, { OUTBOXD_MASTER_KEY: KEY_B }, ["--decrypt"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toBe("re-sealed 2 endpoints");
    const opened = storedSecrets(join(dir, "outboxd.db")).map((s) => JSON.parse(s));
    expect(opened.flat().map((s: { secret: string }) => s.secret)).toContain(SECRET);
  });

  test("a wrong old key changes nothing and says which endpoint; exit code 2", async () => {
    const { dir, url } = await databaseWithEndpoints(KEY_A, 2);
    const before = storedSecrets(join(dir, "outboxd.db"));
    const run = rotate(url, { OUTBOXD_MASTER_KEY: KEY_B, OUTBOXD_NEW_MASTER_KEY: KEY_A });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/endpoint ep_\S+ cannot be opened/);
    expect(run.stderr).toContain("nothing was changed");
    expect(run.stdout).toBe("");
    expect(storedSecrets(join(dir, "outboxd.db"))).toEqual(before);
  });

  test("usage errors: no new key, a malformed one, the same key, --decrypt with a new key or without an old one", async () => {
    const { dir, url } = await databaseWithEndpoints(KEY_A, 1);
    const before = storedSecrets(join(dir, "outboxd.db"));
    const cases: [Record<string, string>, string[], string][] = [
      [{ OUTBOXD_MASTER_KEY: KEY_A }, [], "OUTBOXD_NEW_MASTER_KEY"],
      [{ OUTBOXD_MASTER_KEY: KEY_A, OUTBOXD_NEW_MASTER_KEY: "c2hvcnQ=" }, [], "32 bytes"],
      [{ OUTBOXD_MASTER_KEY: KEY_A, OUTBOXD_NEW_MASTER_KEY: KEY_A }, [], "the same"],
      [
        { OUTBOXD_MASTER_KEY: KEY_A, OUTBOXD_NEW_MASTER_KEY: KEY_B },
        ["--decrypt"],
        "leave OUTBOXD_NEW_MASTER_KEY unset",
      ],
      [{}, ["--decrypt"], "needs OUTBOXD_MASTER_KEY"],
      [{ OUTBOXD_MASTER_KEY: KEY_A, OUTBOXD_NEW_MASTER_KEY: KEY_B }, ["--now"], "usage"],
      [
        { OUTBOXD_MASTER_KEY: "short", OUTBOXD_NEW_MASTER_KEY: KEY_B },
        [],
        "OUTBOXD_MASTER_KEY must be 32 bytes",
      ],
    ];
    for (const [env, args, message] of cases) {
      const run = rotate(url, env, args);
      expect({ code: run.code, message: run.stderr.includes(message) }).toEqual({ code: 2, message: true });
    }
    expect(storedSecrets(join(dir, "outboxd.db"))).toEqual(before);
  });
});
