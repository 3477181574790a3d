// A connection lost in the middle of a group commit on the remote write path (simulated:
// test/helpers/network.ts): every client of that group hears 503 (nothing written, or the
// outcome unknown), nothing is half-written, a retry with the same Idempotency-Key is safe
// (committed once, answered the same), and the driver carries on with the next group.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { installNetwork, type Network } from "../helpers/network.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { startSimServer } from "../helpers/sim-server.ts";

let network: Network;
let server: TestServer;
let sim: ReturnType<typeof startSimServer>;

beforeAll(async () => {
  network = installNetwork({ delayMs: 0 });
  sim = startSimServer(join(tempDir("outboxd-lost-connection-"), "o.db"), "NORMAL");
  server = await startServer({ OUTBOXD_DATABASE_URL: sim.url }, { dispatch: false });
});

afterAll(async () => {
  await server.stop();
  sim.stop();
  network.uninstall();
});

function body(id: string) {
  return {
    records: [{ collection: "orders", id, data: { id } }],
    events: [{ type: "order.created", aggregate: `orders/${id}` }],
  };
}

/** `n` commits sent together (one group, or a few), each with its own Idempotency-Key. */
function commitAll(prefix: string, n: number) {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      server.request("POST", "/v1/commits", body(`${prefix}${i}`), { "idempotency-key": `${prefix}${i}` }),
    ),
  );
}

async function stored(prefix: string): Promise<{ records: number; events: number }> {
  let records = 0;
  let events = 0;
  for (let i = 0; i < 8; i++) {
    const record = await server.request("GET", `/v1/records/orders/${prefix}${i}`);
    if (record.status === 200) records++;
    const listed = await server.request(
      "GET",
      `/v1/events?aggregate=${encodeURIComponent(`orders/${prefix}${i}`)}`,
    );
    events += listed.body.data.length;
  }
  return { records, events };
}

describe.each(["before", "after"] as const)("a write batch lost %s reaching the database", (when) => {
  test("its clients get 503, nothing is half-written, and retrying with the same key commits once", async () => {
    const prefix = `lost-${when}-`;
    network.failNext("write-batch", when);
    const first = await commitAll(prefix, 8);
    const unavailable = first.filter((r) => r.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const response of unavailable) {
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      expect(response.body.status).toBe(503);
    }
    expect(first.every((r) => r.status === 201 || r.status === 503)).toBe(true);
    // All or nothing per commit: a record without its event (or the reverse) is never stored.
    const partial = await stored(prefix);
    expect(partial.records).toBe(partial.events);
    const acknowledged = first.filter((r) => r.status === 201).length;
    // Lost before: the group wrote nothing. Lost after: it committed, though its clients cannot know.
    expect(partial.records).toBe(when === "before" ? acknowledged : 8);

    const again = await commitAll(prefix, 8);
    expect(again.map((r) => r.status)).toEqual(Array(8).fill(201));
    for (const [i, response] of again.entries()) {
      if (first[i]?.status === 201) expect(response.body).toEqual(first[i]?.body);
    }
    expect(await stored(prefix)).toEqual({ records: 8, events: 8 });
    for (let i = 0; i < 8; i++) {
      const record = await server.request("GET", `/v1/records/orders/${prefix}${i}`);
      expect(record.body.version).toBe(1);
    }
  });
});

test("a read batch lost on the way: 503, nothing written, the next request succeeds", async () => {
  network.failNext("read-batch", "before");
  const lost = await server.request("POST", "/v1/commits", body("read-lost"), {
    "idempotency-key": "read-lost",
  });
  expect(lost.status).toBe(503);
  expect((await server.request("GET", "/v1/records/orders/read-lost")).status).toBe(404);
  const retried = await server.request("POST", "/v1/commits", body("read-lost"), {
    "idempotency-key": "read-lost",
  });
  expect(retried.status).toBe(201);
});
