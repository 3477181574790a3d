// Record history over real HTTP (DESIGN §13): every version with its commit, token, time and events.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { apiClient } from "../helpers/api.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
});
afterAll(async () => {
  await server.stop();
});

async function token(name: string, scopes: string[]) {
  const created = await server.request("POST", "/v1/tokens", { name, scopes });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, request: apiClient(server.url, created.body.token) };
}

test("create, update, delete and re-create: every version, newest first, with who, when and the events", async () => {
  const writer = await token("returns-service", ["commit"]);
  const created = await writer.request("POST", "/v1/commits", {
    records: [{ collection: "returns", id: "r-1", expectedVersion: 0, data: { status: "open" } }],
    events: [{ type: "return.opened", payload: { returnId: "r-1" } }],
  });
  expect(created.status).toBe(201);
  const updated = await writer.request(
    "PUT",
    "/v1/records/returns/r-1",
    { data: { status: "approved" } },
    { "if-match": '"1"' },
  );
  expect(updated.status).toBe(200);
  const deleted = await server.request("POST", "/v1/commits", {
    records: [{ collection: "returns", id: "r-1", expectedVersion: 2, delete: true }],
    events: [
      { type: "return.closed", aggregate: "returns/r-1", payload: {} },
      { type: "audit.logged", aggregate: "audit/returns", payload: { n: 1 } },
    ],
  });
  expect(deleted.status).toBe(201);
  const recreated = await writer.request("POST", "/v1/commits", {
    records: [{ collection: "returns", id: "r-1", expectedVersion: 3, data: { status: "reopened" } }],
  });
  expect(recreated.status).toBe(201);

  const history = await writer.request("GET", "/v1/records/returns/r-1/history");
  expect(history.status).toBe(200);
  expect(history.body.next).toBeNull();
  const versions = history.body.data;
  expect(versions.map((v: { version: number }) => v.version)).toEqual([4, 3, 2, 1]);
  expect(versions.map((v: { data: unknown }) => v.data)).toEqual([
    { status: "reopened" },
    null,
    { status: "approved" },
    { status: "open" },
  ]);
  expect(versions.map((v: { deleted: boolean }) => v.deleted)).toEqual([false, true, false, false]);
  expect(versions.map((v: { commitId: string }) => v.commitId)).toEqual([
    recreated.body.commitId,
    deleted.body.commitId,
    updated.body.commitId,
    created.body.commitId,
  ]);
  expect(versions[0].committedBy).toEqual({ tokenId: writer.id, tokenName: "returns-service" });
  expect(versions[1].committedBy).toEqual({ tokenId: "tok_env_admin", tokenName: "OUTBOXD_ADMIN_TOKEN" });
  expect(versions[0].events).toEqual([]);
  // The events each commit inserted, in request order, whichever aggregate they belong to.
  expect(versions[1].events).toEqual(
    deleted.body.events.map((e: { id: string; type: string; aggregate: string; sequence: number }) => ({
      id: e.id,
      type: e.type,
      aggregate: e.aggregate,
      sequence: e.sequence,
    })),
  );
  expect(versions[3].events).toEqual([
    { id: created.body.events[0].id, type: "return.opened", aggregate: "returns/r-1", sequence: 1 },
  ]);
  for (const v of versions) {
    expect(Date.parse(v.at)).toBeGreaterThan(0);
    expect(v.erased).toBe(false);
    expect(v.proposalId).toBeNull();
  }
});

test("pages of versions follow the cursor; read tokens may look, strangers may not", async () => {
  for (let i = 1; i <= 7; i++) {
    const put = await server.request("PUT", "/v1/records/orders/o-paged", { data: { n: i } });
    expect(put.status).toBe(i === 1 ? 201 : 200);
  }
  const reader = await token("auditor", ["read"]);
  const seen: number[] = [];
  let after: string | null = null;
  do {
    const query: string = after === null ? "?limit=3" : `?limit=3&after=${after}`;
    const page = await reader.request("GET", `/v1/records/orders/o-paged/history${query}`);
    expect(page.status).toBe(200);
    seen.push(...page.body.data.map((v: { version: number }) => v.version));
    after = page.body.next;
  } while (after !== null);
  expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);

  const missing = await reader.request("GET", "/v1/records/orders/never/history");
  expect(missing.status).toBe(404);
  expect(missing.body.currentVersion).toBeNull();
  const badCursor = await reader.request("GET", "/v1/records/orders/o-paged/history?after=abc");
  expect(badCursor.status).toBe(422);
  expect(badCursor.body.errors[0].pointer).toBe("query:after");
  const badName = await reader.request("GET", "/v1/records/orders/o%20x/history");
  expect(badName.status).toBe(422);
  const stranger = await apiClient(server.url, "otk_nobody")("GET", "/v1/records/orders/o-paged/history");
  expect(stranger.status).toBe(401);
});
