// Per-token rate limiting (DESIGN §3: 429 with Retry-After): a token bucket per token id,
// OUTBOXD_RATE_LIMIT requests per second with OUTBOXD_RATE_BURST at once; 0 turns it off.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { RateLimiter } from "../../src/http/rate-limit.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("the token bucket", () => {
  test("lets a burst through, then one request per 1/rate seconds", () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(2, 3, () => now);
    expect([limiter.take("a"), limiter.take("a"), limiter.take("a")]).toEqual([0, 0, 0]);
    expect(limiter.take("a")).toBe(500); // one request refills in 500 ms at 2/s
    now += 499;
    expect(limiter.take("a")).toBe(1);
    now += 1;
    expect(limiter.take("a")).toBe(0);
    expect(limiter.take("a")).toBe(500);
  });

  test("buckets are per key and refill only up to the burst", () => {
    let now = 0;
    const limiter = new RateLimiter(1, 2, () => now);
    expect([limiter.take("a"), limiter.take("a"), limiter.take("a")]).toEqual([0, 0, 1000]);
    expect(limiter.take("b")).toBe(0);
    now += 3_600_000; // an hour idle is still only a burst of 2
    expect([limiter.take("a"), limiter.take("a"), limiter.take("a")]).toEqual([0, 0, 1000]);
  });

  test("a clock that steps back refills nothing and does not drain the bucket", () => {
    let now = 10_000;
    const limiter = new RateLimiter(1, 1, () => now);
    expect(limiter.take("a")).toBe(0);
    now -= 5_000;
    expect(limiter.take("a")).toBe(1000);
    now += 1000;
    expect(limiter.take("a")).toBe(0);
  });

  test("refuses a rate or burst that is not positive", () => {
    expect(() => new RateLimiter(0, 1, () => 0)).toThrow(RangeError);
    expect(() => new RateLimiter(1, 0, () => 0)).toThrow(RangeError);
  });
});

describe("configuration", () => {
  test("defaults: 20,000 requests per second per token, bursts of 40,000", () => {
    const config = loadConfig({});
    expect(config.rateLimit).toBe(20_000);
    expect(config.rateBurst).toBe(40_000);
  });

  test("the burst defaults to twice the rate; 0 turns limiting off", () => {
    expect(loadConfig({ OUTBOXD_RATE_LIMIT: "50" }).rateBurst).toBe(100);
    expect(loadConfig({ OUTBOXD_RATE_LIMIT: "50", OUTBOXD_RATE_BURST: "7" }).rateBurst).toBe(7);
    expect(loadConfig({ OUTBOXD_RATE_LIMIT: "0" }).rateLimit).toBe(0);
  });

  test("anything but a whole number is a configuration error naming the variable", () => {
    for (const env of [
      { OUTBOXD_RATE_LIMIT: "fast" },
      { OUTBOXD_RATE_LIMIT: "-1" },
      { OUTBOXD_RATE_LIMIT: "1.5" },
      { OUTBOXD_RATE_BURST: "0" },
    ]) {
      const name = Object.keys(env)[0] as string;
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(name);
    }
  });
});

describe("over HTTP", () => {
  let server: TestServer;
  let offset = 0;
  let commitToken = "";

  const as = (token: string, method: string, path: string, body?: unknown) =>
    server.request(method, path, body, { authorization: `Bearer ${token}` });

  beforeAll(async () => {
    server = await startServer(
      { OUTBOXD_RATE_LIMIT: "2", OUTBOXD_RATE_BURST: "3" },
      { dispatch: false, clock: () => Date.now() + offset },
    );
    // The admin token's own bucket pays for this one request.
    commitToken = expectStatus(
      await server.request("POST", "/v1/tokens", { name: "limited", scopes: ["commit", "read"] }),
      201,
    ).token;
  });
  afterAll(async () => {
    await server.stop();
  });

  test("past the burst a token gets 429 problem+json with Retry-After in whole seconds", async () => {
    offset += 10_000;
    for (let i = 0; i < 3; i++) expectStatus(await as(commitToken, "GET", "/v1/events"), 200);
    const limited = await as(commitToken, "GET", "/v1/events");
    const problem = expectProblem(limited, 429);
    expect(problem.type).toEndWith("/rate-limited");
    expect(limited.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(Number(limited.headers.get("retry-after"))).toBe(1);
    expect(problem.retryAfter).toBe(1);
    // Time passes (the injected clock): the bucket has refilled.
    offset += 1_000;
    expectStatus(await as(commitToken, "GET", "/v1/events"), 200);
  });

  test("a refused commit writes nothing", async () => {
    offset += 10_000;
    for (let i = 0; i < 3; i++) await as(commitToken, "GET", "/v1/stats");
    expectProblem(
      await as(commitToken, "POST", "/v1/commits", {
        records: [{ collection: "limited", id: "r1", data: {} }],
        events: [{ type: "limited.x" }],
      }),
      429,
    );
    offset += 10_000;
    expectProblem(await as(commitToken, "GET", "/v1/records/limited/r1"), 404);
  });

  test("each token has its own bucket: one token over its limit does not slow another", async () => {
    offset += 10_000;
    for (let i = 0; i < 3; i++) await as(commitToken, "GET", "/v1/events");
    expectProblem(await as(commitToken, "GET", "/v1/events"), 429);
    expectStatus(await server.request("GET", "/v1/events"), 200); // the admin token
  });

  test("every authenticated request counts, a 403 included; requests without a valid token get 401", async () => {
    offset += 10_000;
    for (let i = 0; i < 3; i++) expectProblem(await as(commitToken, "GET", "/v1/endpoints/x/secret"), 403);
    expectProblem(await as(commitToken, "GET", "/v1/events"), 429);
    for (let i = 0; i < 10; i++) expectProblem(await as("otk_wrong", "GET", "/v1/events"), 401);
  });

  test("public routes are not limited", async () => {
    for (let i = 0; i < 10; i++) expect((await server.request("GET", "/healthz")).status).toBe(200);
  });
});

test("OUTBOXD_RATE_LIMIT=0: no limit at all", async () => {
  const server = await startServer({ OUTBOXD_RATE_LIMIT: "0" }, { dispatch: false });
  try {
    const statuses = await Promise.all(
      Array.from({ length: 300 }, () => server.request("GET", "/v1/stats").then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
  } finally {
    await server.stop();
  }
});

test("the default limit lets ordinary bursts through", async () => {
  const server = await startServer({}, { dispatch: false });
  try {
    const statuses = await Promise.all(
      Array.from({ length: 300 }, () => server.request("GET", "/healthz").then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    const limited = await Promise.all(
      Array.from({ length: 300 }, () => server.request("GET", "/v1/stats").then((r) => r.status)),
    );
    expect(new Set(limited)).toEqual(new Set([200]));
  } finally {
    await server.stop();
  }
});
