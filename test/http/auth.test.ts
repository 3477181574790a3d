// Bearer tokens and scopes (DESIGN §1.7, §3 Scopes, §8 first start): who may call what, how
// tokens are stored, and the admin token a first start creates.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { all } from "../../src/db/op.ts";
import { createLogger } from "../../src/ops/log.ts";
import { createEndpoint, expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestResponse, type TestServer, tempDir } from "../helpers/server.ts";

let server: TestServer;
type Scope = "read" | "commit" | "propose" | "approve" | "consume" | "admin";
const ALL_SCOPES: Scope[] = ["read", "commit", "propose", "approve", "consume", "admin"];
const tokens = Object.fromEntries(ALL_SCOPES.map((s) => [s, ""])) as Record<Scope, string>;
const ids = { endpoint: "", victim: "", delivery: "", token: "", event: "" };

async function createToken(name: string, scopes: string[]): Promise<{ id: string; token: string }> {
  const body = expectStatus(await server.request("POST", "/v1/tokens", { name, scopes }), 201);
  expect(body.id).toStartWith("tok_");
  expect(body.token).toStartWith("otk_");
  expect(body.scopes).toEqual(scopes);
  return body;
}

function as(token: string | null, method: string, path: string, body?: unknown): Promise<TestResponse> {
  // The harness adds the admin token; an explicit header replaces it ("" sends none at all).
  return server.request(method, path, body, { authorization: token === null ? "" : `Bearer ${token}` });
}

beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
  for (const scope of ALL_SCOPES) tokens[scope] = (await createToken(`t-${scope}`, [scope])).token;
  ids.endpoint = await createEndpoint(server);
  ids.victim = await createEndpoint(server);
  const committed = expectStatus(
    await server.request("POST", "/v1/commits", {
      records: [{ collection: "auth", id: "fixture", data: {} }],
      events: [{ type: "auth.fixture" }],
    }),
    201,
  );
  ids.event = committed.events[0].id;
  ids.delivery = committed.events[0].deliveries[0].id;
  ids.token = (await createToken("victim", ["read"])).id;
});
afterAll(async () => {
  await server.stop();
});

describe("authentication", () => {
  test("no token, an unknown token or another scheme is 401", async () => {
    for (const authorization of ["", "Bearer", "Bearer otk_unknown", `Basic ${btoa("a:b")}`, "Bearer a b"]) {
      const response = await server.request("GET", "/v1/events", undefined, { authorization });
      expect(expectProblem(response, 401).type).toEndWith("unauthorized");
    }
    expectProblem(await as(null, "POST", "/v1/commits", { events: [{ type: "x", aggregate: "a" }] }), 401);
  });

  test("the scheme is case-insensitive", async () => {
    expectStatus(
      await server.request("GET", "/v1/events", undefined, { authorization: `bearer ${tokens.read}` }),
      200,
    );
  });

  test("a revoked token is 401 from then on", async () => {
    const { id, token } = await createToken("short-lived", ["commit", "read"]);
    expectStatus(await as(token, "GET", "/v1/events"), 200);
    expect(expectStatus(await server.request("DELETE", `/v1/tokens/${id}`), 200)).toEqual({
      id,
      revoked: true,
    });
    expectProblem(await as(token, "GET", "/v1/events"), 401);
    expectProblem(await as(token, "PUT", "/v1/records/auth/revoked", { data: {} }), 401);
    expectProblem(await server.request("DELETE", `/v1/tokens/${id}`), 404);
    const listed = expectStatus(await server.request("GET", "/v1/tokens"), 200).data.find(
      (t: { id: string }) => t.id === id,
    );
    expect(listed.revokedAt).not.toBeNull();
  });

  test("public routes need no token", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const response = await as(null, "GET", path);
      expect(response.status).toBe(200);
    }
  });
});

describe("scopes", () => {
  // [method, path, body, scopes that may call it]; admin may call everything.
  const routes: [string, string, unknown, Scope[]][] = [
    ["POST", "/v1/commits", { events: [{ type: "auth.x", aggregate: "auth/x" }] }, ["commit"]],
    ["PUT", "/v1/records/auth/put", { data: { a: 1 } }, ["commit"]],
    ["GET", "/v1/records/auth/fixture", undefined, ["commit", "read", "propose", "approve"]],
    ["GET", "/v1/records/auth", undefined, ["commit", "read", "propose", "approve"]],
    ["GET", "/v1/records/auth/fixture/history", undefined, ["commit", "read"]],
    ["GET", "/v1/ledger", undefined, ["read"]],
    ["GET", "/v1/ledger/commits", undefined, ["read"]],
    ["GET", "/v1/events", undefined, ["read"]],
    ["GET", "/v1/events/:event", undefined, ["read"]],
    ["GET", "/v1/deliveries", undefined, ["read"]],
    ["GET", "/v1/deliveries/:delivery", undefined, ["read"]],
    ["GET", "/v1/deliveries/:delivery/attempts", undefined, ["read"]],
    ["GET", "/v1/stats", undefined, ["read"]],
    ["GET", "/v1/endpoints", undefined, ["read"]],
    ["GET", "/v1/endpoints/:endpoint", undefined, ["read"]],
    ["GET", "/v1/tokens", undefined, ["read"]],
    ["GET", "/v1/endpoints/:endpoint/secret", undefined, []],
    ["POST", "/v1/endpoints", { url: "http://127.0.0.1:9/scoped" }, []],
    ["PATCH", "/v1/endpoints/:endpoint", { description: "changed" }, []],
    ["POST", "/v1/endpoints/:endpoint/rotate-secret", undefined, []],
    ["POST", "/v1/endpoints/:endpoint/enable", undefined, []],
    ["POST", "/v1/endpoints/:endpoint/recover", { since: "2020-01-01T00:00:00Z" }, []],
    ["POST", "/v1/deliveries/:delivery/replay", undefined, []],
    ["POST", "/v1/deliveries/:delivery/cancel", undefined, []],
    ["POST", "/v1/deliveries/replay", { status: "dead" }, []],
    ["POST", "/v1/tokens", { name: "x", scopes: ["read"] }, []],
    ["DELETE", "/v1/tokens/tok_nonexistent", undefined, []],
    ["GET", "/v1/stats/history", undefined, ["read"]],
    ["GET", "/v1/attempts", undefined, ["read"]],
    ["GET", "/metrics", undefined, ["read"]],
    ["POST", "/v1/endpoints/:endpoint/test", undefined, []],
    // A webhook endpoint here: the consumer routes answer 409 to the scopes that may call them.
    ["POST", "/v1/endpoints/:endpoint/poll", {}, ["consume"]],
    ["POST", "/v1/endpoints/:endpoint/ack", { acks: [] }, ["consume"]],
    ["GET", "/v1/endpoints/:endpoint/stream", undefined, ["consume"]],
    ["DELETE", "/v1/endpoints/:victim", undefined, []],
    ["PUT", "/v1/event-types/auth.typed", {}, []],
    [
      "POST",
      "/v1/proposals",
      { summary: "s", commit: { events: [{ type: "a.b", aggregate: "a/1" }] } },
      ["propose", "commit"],
    ],
    ["GET", "/v1/proposals", undefined, ["propose", "approve", "read", "commit"]],
    ["GET", "/v1/proposals/prp_none", undefined, ["propose", "approve", "read", "commit"]],
    ["POST", "/v1/proposals/prp_none/approve", undefined, ["approve"]],
    ["POST", "/v1/proposals/prp_none/reject", undefined, ["approve"]],
    ["GET", "/v1/whoami", undefined, ["read", "commit", "propose", "approve", "consume"]],
    [
      "POST",
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "ping" },
      ["read", "commit", "propose", "approve", "consume"],
    ],
    ["GET", "/v1/event-types", undefined, ["read"]],
    ["GET", "/v1/event-types/auth.typed", undefined, ["read"]],
    ["DELETE", "/v1/event-types/auth.none", undefined, []],
  ];
  const fill = (path: string) =>
    path
      .replace(":event", ids.event)
      .replace(":delivery", ids.delivery)
      .replace(":endpoint", ids.endpoint)
      .replace(":victim", ids.victim)
      .replace(":token", ids.token);

  for (const scope of ALL_SCOPES) {
    test.each(routes)(`${scope} token: %s %s`, async (method, path, body, allowed) => {
      const response = await as(tokens[scope], method, fill(path), body);
      if (scope === "admin" || allowed.includes(scope)) {
        // Allowed: the route's own answer (2xx, or 404/409 for fixture state), never 401/403/5xx
        // (but 503 from the endpoint test: this server runs no dispatcher).
        expect([401, 403]).not.toContain(response.status);
        if (!(path.endsWith("/test") && response.status === 503)) expect(response.status).toBeLessThan(500);
      } else {
        expect(expectProblem(response, 403).type).toEndWith("forbidden");
      }
    });
  }

  test("the table above names every route that needs a token; every other route is public", async () => {
    const served = new Set(
      server.outboxd.http.routes
        .filter((r) => r.method !== "ALL")
        .map((r) => `${r.method} ${r.path.replace(/:id$/, ":x").replace(/:id\//, ":x/")}`),
    );
    const tabled = new Set(
      routes.map(
        ([method, path]) => `${method} ${path.replace(/:(event|delivery|endpoint|victim)\b/g, ":x")}`,
      ),
    );
    const normal = (key: string) =>
      key
        .replace(/\/(tok_nonexistent|:x)$/, "/:x")
        .replace("/v1/records/auth/fixture", "/v1/records/:collection/:x")
        .replace("/v1/records/auth/put", "/v1/records/:collection/:x")
        .replace("/v1/records/auth", "/v1/records/:collection")
        .replace(/\/v1\/event-types\/auth\.\w+$/, "/v1/event-types/:type")
        .replace(/\/v1\/proposals\/prp_none/, "/v1/proposals/:x");
    const covered = new Set([...tabled].map(normal));
    const publicRoutes = ["GET /healthz", "GET /readyz", "GET /snippet/verify.ts", "GET /snippet/verify.js"];
    publicRoutes.push("GET /openapi.json", "GET /docs", "GET /", "GET /mcp", "DELETE /mcp");
    const uncovered = [...served]
      .map(normal)
      .filter((key) => !covered.has(key) && !publicRoutes.includes(key));
    expect(uncovered).toEqual([]);
    for (const key of publicRoutes) {
      const path = key.split(" ")[1] as string;
      expect([401, 403]).not.toContain((await as(null, "GET", path)).status);
    }
  });

  test("a commit token commits and reads records, but not events, stats or secrets", async () => {
    const committed = expectStatus(
      await as(tokens.commit, "POST", "/v1/commits", {
        records: [{ collection: "auth", id: "by-commit", data: { ok: true } }],
        events: [{ type: "auth.committed" }],
      }),
      201,
    );
    expect(committed.records[0].version).toBe(1);
    expect(expectStatus(await as(tokens.commit, "GET", "/v1/records/auth/by-commit"), 200).data).toEqual({
      ok: true,
    });
    expectProblem(await as(tokens.commit, "GET", `/v1/events/${committed.events[0].id}`), 403);
    expectProblem(await as(tokens.commit, "GET", "/v1/stats"), 403);
  });

  test("a read token reads events and stats but cannot commit (and nothing is written)", async () => {
    expectProblem(
      await as(tokens.read, "POST", "/v1/commits", {
        records: [{ collection: "auth", id: "by-read", data: {} }],
        events: [{ type: "auth.read" }],
      }),
      403,
    );
    expectProblem(await as(tokens.read, "GET", "/v1/records/auth/by-read"), 404);
    expectStatus(await as(tokens.read, "GET", "/v1/stats"), 200);
    const events = expectStatus(await as(tokens.read, "GET", "/v1/events?aggregate=auth/by-read"), 200);
    expect(events.data).toEqual([]);
  });

  test("a token with several scopes holds each of them", async () => {
    const { token } = await createToken("both", ["read", "commit"]);
    expectStatus(await as(token, "GET", "/v1/events"), 200);
    expectStatus(await as(token, "PUT", "/v1/records/auth/both", { data: {} }), 201);
    expectProblem(await as(token, "POST", "/v1/tokens", { name: "x", scopes: ["admin"] }), 403);
  });

  test("tokens take every scope name (admin, commit, propose, approve, consume, read); an unknown one is 422 naming it", async () => {
    const { token } = await createToken("agent", ["propose", "read"]);
    expectStatus(await as(token, "GET", "/v1/records/auth/fixture"), 200);
    expectProblem(await as(token, "PUT", "/v1/records/auth/by-agent", { data: {} }), 403);
    const refused = expectProblem(
      await server.request("POST", "/v1/tokens", { name: "x", scopes: ["read", "root"] }),
      422,
    );
    expect(refused.errors[0].pointer).toBe("/scopes/1");
  });

  test("the token list never shows a token or its hash", async () => {
    const { token } = await createToken("listed", ["read"]);
    const listed = await server.request("GET", "/v1/tokens?limit=500");
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(token);
    expect(text).not.toContain(createHash("sha256").update(token).digest("hex"));
    for (const entry of listed.body.data) {
      expect(Object.keys(entry).sort()).toEqual([
        "createdAt",
        "id",
        "lastUsedAt",
        "name",
        "revokedAt",
        "scopes",
      ]);
    }
  });
});

test("tokens are stored only as hashes", async () => {
  const { id, token } = await createToken("stored", ["commit"]);
  expectStatus(await as(token, "PUT", "/v1/records/auth/stored", { data: {} }), 201);
  // Read through outboxd's own connection: on a local file, its WAL included.
  const read = (sql: string) => server.outboxd.db.driver.read(all<Record<string, unknown>>(sql));
  {
    const rows = await read("SELECT * FROM tokens");
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      for (const value of Object.values(row)) {
        expect(String(value)).not.toContain(token);
        expect(String(value)).not.toContain(token.slice(4)); // without the otk_ prefix either
        expect(String(value)).not.toContain(server.token); // the env admin token is never stored
      }
    }
    const row = rows.find((r) => r.id === id);
    expect(row?.hash).toBe(createHash("sha256").update(token).digest("hex"));
    // Nowhere else in the database either.
    const dump = JSON.stringify(
      await Promise.all(["commits", "records", "events", "endpoints"].map((t) => read(`SELECT * FROM ${t}`))),
    );
    expect(dump).not.toContain(token);
  }
});

describe("first start without OUTBOXD_ADMIN_TOKEN", () => {
  test("creates admin-token beside the database (mode 0600), logs only its path, and the token works", async () => {
    const lines: string[] = [];
    const logger = createLogger("debug", (line) => lines.push(line));
    // A file beside the database: a local file even when the suites run on a libSQL server.
    const first = await startServer(
      { OUTBOXD_ADMIN_TOKEN: "" },
      { dispatch: false, logger },
      { local: true },
    );
    let second: TestServer | undefined;
    try {
      expect(first.outboxd.config.adminToken).toBeUndefined();
      const path = join(first.dir, "admin-token");
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const token = readFileSync(path, "utf8").trim();
      expect(token).toStartWith("otk_");
      const log = lines.join("");
      expect(log).toContain(path);
      expect(log).not.toContain(token);

      // The harness's own token is not configured in this server: it is refused.
      expectProblem(await first.request("GET", "/v1/tokens"), 401);
      const admin = { authorization: `Bearer ${token}` };
      const listed = expectStatus(await first.request("GET", "/v1/tokens", undefined, admin), 200);
      expect(listed.data).toHaveLength(1);
      expect(listed.data[0].scopes).toEqual(["admin"]);
      expectStatus(await first.request("POST", "/v1/tokens", { name: "made", scopes: ["read"] }, admin), 201);
      expectStatus(
        await first.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/first" }, admin),
        201,
      );

      // A second start on the same database creates no new token and keeps the file as it is.
      await first.outboxd.stop();
      second = await startServer(
        { OUTBOXD_ADMIN_TOKEN: "", OUTBOXD_DATABASE_URL: `file:${join(first.dir, "outboxd.db")}` },
        { dispatch: false, logger },
      );
      expect(readFileSync(path, "utf8").trim()).toBe(token);
      expect(
        expectStatus(await second.request("GET", "/v1/tokens", undefined, admin), 200).data,
      ).toHaveLength(2);
    } finally {
      await second?.stop();
      await first.stop();
    }
  });

  test("an admin-token file left readable by others is replaced, not written into", async () => {
    const dir = tempDir();
    const path = join(dir, "admin-token");
    writeFileSync(path, "stale\n", { mode: 0o644 });
    chmodSync(path, 0o644);
    const server = await startServer(
      { OUTBOXD_ADMIN_TOKEN: "", OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}` },
      { dispatch: false, logger: createLogger("error", () => {}) },
    );
    try {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const token = readFileSync(path, "utf8").trim();
      expectStatus(
        await server.request("GET", "/v1/tokens", undefined, { authorization: `Bearer ${token}` }),
        200,
      );
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
