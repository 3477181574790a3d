// DESIGN §1.8 in one process. A full disk is not fatal: a write that meets SQLITE_FULL answers 503
// `storage-full`, nothing of it is stored, and /readyz fails until a write succeeds again. The
// disk is "full" the way SQLite itself makes it so: the writer connection's max_page_count at the
// database's current size (SQLite then answers SQLITE_FULL for any write that needs a new page).
// And OUTBOXD_SYNCHRONOUS=NORMAL, the opt-out, says at start that durability is void.
// (Fatal storage errors stop the process: test/drills/durability.test.ts.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../src/ops/log.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { sqlWrite } from "../helpers/test-writes.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({}, { dispatch: false }, { local: true });
});

afterAll(async () => {
  await server.stop();
});

/** A commit too big for the database's free pages. */
function bigCommit(id: string) {
  return {
    records: [{ collection: "orders", id, data: { id, filler: "x".repeat(60_000) } }],
    events: [{ type: "order.placed", payload: { id } }],
  };
}

test("SQLITE_FULL: 503 storage-full, nothing stored, /readyz 503 until a write succeeds", async () => {
  expect((await server.request("POST", "/v1/commits", bigCommit("before"))).status).toBe(201);
  expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

  // 1: never below the database's size, so exactly its size.
  await server.outboxd.db.write(sqlWrite("PRAGMA max_page_count = 1", {}));
  const full = await server.request("POST", "/v1/commits", bigCommit("full"));
  expect(full.status).toBe(503);
  expect(full.headers.get("content-type")).toContain("application/problem+json");
  expect(full.body.type).toEndWith("storage-full");
  expect((await server.request("GET", "/v1/records/orders/full")).status).toBe(404);
  const ready = await fetch(`${server.url}/readyz`);
  expect(ready.status).toBe(503);
  expect((await ready.json()).checks.database).toContain("storage full");

  // Room again: the next write that succeeds makes the process ready again.
  await server.outboxd.db.write(sqlWrite("PRAGMA max_page_count = 1073741823", {}));
  expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  expect((await server.request("POST", "/v1/commits", bigCommit("after"))).status).toBe(201);
  expect((await server.request("GET", "/v1/records/orders/after")).status).toBe(200);
});

test("OUTBOXD_SYNCHRONOUS=NORMAL: one warn line at start says durability is void; FULL says nothing", async () => {
  for (const synchronous of ["NORMAL", "FULL"]) {
    const lines: string[] = [];
    const other = await startServer(
      { OUTBOXD_SYNCHRONOUS: synchronous },
      { dispatch: false, logger: createLogger("info", (l) => lines.push(l)) },
      { local: true },
    );
    await other.stop();
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.msg.includes("OUTBOXD_SYNCHRONOUS"));
    if (synchronous === "FULL") expect(warnings).toEqual([]);
    else {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: "warn" });
      expect(warnings[0].msg).toContain("durability (DESIGN §1.8) is void");
    }
  }
});
