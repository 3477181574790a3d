// @outboxd/client (clients/typescript, DESIGN §14) against a real outboxd on 127.0.0.1: imported
// from source the way Bun users import it (the package directory), commits, typed problems,
// retries that cannot commit twice (a real TCP proxy cuts the first answer), and the list
// helpers following `next`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, Socket } from "node:net";
import { createClient, OutboxdError } from "../../clients/typescript";
import { expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

/** Real fetch, counting the requests the client makes (not a mock: every request goes out). */
function countingFetch() {
  const seen: { method: string; path: string; key: string | null }[] = [];
  const fetcher = (request: Request) => {
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname + new URL(request.url).search,
      key: request.headers.get("idempotency-key"),
    });
    return fetch(request);
  };
  return { seen, fetcher };
}

const record = (id: string, data: Record<string, unknown>, expectedVersion?: number) => ({
  records: [
    { collection: "orders", id, data, ...(expectedVersion !== undefined ? { expectedVersion } : {}) },
  ],
});

describe("@outboxd/client against a real server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  test("commit() sends its own Idempotency-Key and returns the commit's answer", async () => {
    const { seen, fetcher } = countingFetch();
    const client = createClient({ baseUrl: server.url, token: server.token, fetch: fetcher });
    const result = await client.commit({
      ...record("o-1", { total: 42 }),
      events: [{ type: "order.placed", payload: { orderId: "o-1" } }],
    });
    expect(result.commitId).toStartWith("cmt_");
    expect(result.records).toEqual([{ collection: "orders", id: "o-1", version: 1, deleted: false }]);
    expect(result.events[0]).toMatchObject({ type: "order.placed", aggregate: "orders/o-1", sequence: 1 });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    // The key is the server's idempotency key: the same key and body get the same commit back.
    const again = await client.commit(
      { ...record("o-1", { total: 42 }), events: [{ type: "order.placed", payload: { orderId: "o-1" } }] },
      { idempotencyKey: seen[0]?.key ?? "" },
    );
    expect(again.commitId).toBe(result.commitId);
  });

  test("a version conflict is a typed 409 OutboxdError with currentVersion, not retried", async () => {
    const { seen, fetcher } = countingFetch();
    const client = createClient({ baseUrl: server.url, token: server.token, fetch: fetcher });
    await client.commit(record("o-2", { n: 1 }, 0));
    await client.commit(record("o-2", { n: 2 }, 1));
    const error = await client.commit(record("o-2", { n: 3 }, 1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxdError);
    const problem = error as OutboxdError;
    expect(problem.name).toBe("OutboxdError");
    expect(problem.status).toBe(409);
    expect(problem.type).toEndWith("/version-conflict");
    expect(problem.slug).toBe("version-conflict");
    expect(problem.currentVersion).toBe(2);
    expect(problem.detail).toContain("orders/o-2");
    expect(seen).toHaveLength(3);

    // A record that never existed: currentVersion null.
    const missing = (await client.commit(record("o-none", { n: 1 }, 4)).catch((e) => e)) as OutboxdError;
    expect(missing.currentVersion).toBeNull();
  });

  test("a validation problem carries the field pointers", async () => {
    const client = createClient({ baseUrl: server.url, token: server.token });
    const error = (await client
      .commit({ records: [{ collection: "orders", id: "bad id!", data: {} }] })
      .catch((e) => e)) as OutboxdError;
    expect(error).toBeInstanceOf(OutboxdError);
    expect(error.status).toBe(422);
    expect(error.errors.map((e) => e.pointer)).toContain("/records/0/id");
    expect(error.currentVersion).toBeUndefined();
  });

  test("concurrent commits with one key (409 idempotency-in-progress is retried) all get the one commit", async () => {
    const client = createClient({ baseUrl: server.url, token: server.token, retry: { baseDelayMs: 10 } });
    const key = crypto.randomUUID();
    const body = { ...record("o-3", { n: 1 }), events: [{ type: "order.placed", payload: {} }] };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => client.commit(body, { idempotencyKey: key })),
    );
    expect(new Set(results.map((r) => r.commitId)).size).toBe(1);
    const read = expectStatus(await server.request("GET", "/v1/records/orders/o-3"), 200);
    expect(read.version).toBe(1);
  });

  test("list() follows next through every page; listAll() collects them", async () => {
    const writer = createClient({ baseUrl: server.url, token: server.token });
    for (let i = 0; i < 5; i++) await writer.commit(record(`p-${i}`, { i }));
    const { seen, fetcher } = countingFetch();
    const client = createClient({ baseUrl: server.url, token: server.token, fetch: fetcher });
    const ids: string[] = [];
    for await (const item of client.list("/v1/records/{collection}", {
      path: { collection: "orders" },
      query: { limit: 2, after: "o-9" },
    })) {
      ids.push(String(item.id));
    }
    expect(ids).toEqual(["p-0", "p-1", "p-2", "p-3", "p-4"]);
    expect(seen.map((s) => s.path)).toEqual([
      "/v1/records/orders?limit=2&after=o-9",
      "/v1/records/orders?limit=2&after=p-1",
      "/v1/records/orders?limit=2&after=p-3",
    ]);
    // Two events so far (o-1 and o-3), one per page, until `next` is null (a full last page may
    // still name a next one, which is then empty).
    seen.length = 0;
    const events = await client.listAll("/v1/events", { query: { limit: 1 } });
    expect(events.map((e) => e.aggregate).sort()).toEqual(["orders/o-1", "orders/o-3"]);
    expect(seen.length).toBeGreaterThanOrEqual(events.length);
    expect(seen.length).toBeLessThanOrEqual(events.length + 1);
  });

  test("a list route's problem is an OutboxdError too", async () => {
    const client = createClient({ baseUrl: server.url, token: server.token });
    const error = (await client
      .listAll("/v1/events", { query: { limit: 501 } })
      .catch((e) => e)) as OutboxdError;
    expect(error).toBeInstanceOf(OutboxdError);
    expect(error.status).toBe(422);
  });
});

describe("retries", () => {
  let server: TestServer;
  /** One request a second per token: the second request in a row is answered 429, Retry-After: 1. */
  let limited: TestServer;
  let proxy: Server;
  let proxyUrl = "";
  /** While armed, the next answer the server starts to send is cut: both sockets destroyed. */
  let cutNext = false;
  let cuts = 0;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = await startServer();
    limited = await startServer({ OUTBOXD_RATE_LIMIT: "1", OUTBOXD_RATE_BURST: "1" });
    const upstreamPort = Number(new URL(server.url).port);
    proxy = createServer((client) => {
      const upstream = new Socket();
      sockets.add(client).add(upstream);
      upstream.connect(upstreamPort, "127.0.0.1");
      client.on("data", (chunk) => upstream.write(chunk));
      upstream.on("data", (chunk) => {
        if (cutNext) {
          // The server has committed and is answering: the client never sees the answer.
          cutNext = false;
          cuts += 1;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("close", close).on("error", close);
      upstream.on("close", close).on("error", close);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const address = proxy.address();
    if (!address || typeof address === "string") throw new Error("no proxy address");
    proxyUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    await server.stop();
    await limited.stop();
  });

  test("a connection cut after the server committed: the retry with the same key does not commit twice", async () => {
    const { seen, fetcher } = countingFetch();
    const client = createClient({ baseUrl: proxyUrl, token: server.token, fetch: fetcher });
    cutNext = true;
    const result = await client.commit({
      ...record("k-1", { total: 1 }),
      events: [{ type: "order.placed", payload: { orderId: "k-1" } }],
    });
    expect(cuts).toBe(1);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    // One commit: version 1, one event in the aggregate, and it is the one the client got back.
    const read = expectStatus(await server.request("GET", "/v1/records/orders/k-1"), 200);
    expect(read.version).toBe(1);
    const events = expectStatus(await server.request("GET", "/v1/events?aggregate=orders/k-1"), 200);
    expect(events.data.map((e: { id: string }) => e.id)).toEqual([result.events[0]?.id]);
  });

  test("429 with Retry-After is waited out and retried with the same key", async () => {
    const { seen, fetcher } = countingFetch();
    const client = createClient({ baseUrl: limited.url, token: limited.token, fetch: fetcher });
    await client.commit(record("k-2", { n: 1 }));
    const before = Date.now();
    const second = await client.commit(record("k-3", { n: 1 }));
    expect(second.records[0]?.version).toBe(1);
    const attempts = seen.slice(1);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(attempts.map((s) => s.key)).size).toBe(1);
    // Retry-After is whole seconds: the client waited for it, not its own 200 ms backoff.
    expect(Date.now() - before).toBeGreaterThanOrEqual(900);
  });

  test("out of tries on the network: an OutboxdError with status 0 and the cause", async () => {
    const client = createClient({
      baseUrl: "http://127.0.0.1:9",
      token: server.token,
      retry: { attempts: 2, baseDelayMs: 1 },
    });
    const error = (await client.commit(record("k-4", {})).catch((e) => e)) as OutboxdError;
    expect(error).toBeInstanceOf(OutboxdError);
    expect(error.status).toBe(0);
    expect(error.cause).toBeDefined();
  });
});
