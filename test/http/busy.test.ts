import { expect, test } from "bun:test";
import { join } from "node:path";
import { startServer } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

test("a write lock held by another process past the busy timeout is a 503 with Retry-After, and nothing is written", async () => {
  // Another process's lock on the file: a local file even when the suites run on a libSQL server.
  const server = await startServer({ OUTBOXD_BUSY_TIMEOUT: "100ms" }, { dispatch: false }, { local: true });
  const other = new Database(join(server.dir, "outboxd.db"));
  try {
    other.exec("BEGIN IMMEDIATE");
    const response = await server.request("POST", "/v1/commits", {
      records: [{ collection: "orders", id: "o-1", data: { n: 1 } }],
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    other.exec("ROLLBACK");
    expect((await server.request("GET", "/v1/records/orders/o-1")).status).toBe(404);
    // Once the lock is free the same commit goes through.
    expect(
      (
        await server.request("POST", "/v1/commits", {
          records: [{ collection: "orders", id: "o-1", data: { n: 1 } }],
        })
      ).status,
    ).toBe(201);
  } finally {
    other.close();
    await server.stop();
  }
});
