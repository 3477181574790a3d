// Endpoint controls through the HTTP API (DESIGN §19): each control is accepted on create and
// PATCH, returned by GET, refused with a pointer when invalid, and removed by PATCH null; the
// webhook-only controls are refused on a pull endpoint; disableAfter defaults to "5d".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { openDatabase } from "../../src/db/open.ts";
import { getEndpoint } from "../../src/endpoints/endpoints.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
});
afterAll(async () => {
  await server.stop();
});

const URL = "https://receiver.example.com/hooks";
const CONTROLS = {
  rateLimit: { perSecond: 50, burst: 100 },
  retrySchedule: ["5s", "30s", "2m"],
  disableAfter: "12h",
  filter: [
    { path: "/data/status", op: "in", value: ["approved", "refunded"] },
    { path: "/data/amount", op: "gt", value: 10 },
    { path: "/data/note", op: "exists", value: false },
  ],
};

describe("create, read, change", () => {
  test("every control is stored and returned by POST, GET and the list", async () => {
    const created = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: URL, ...CONTROLS }),
      201,
    );
    expect(created).toMatchObject({
      ...CONTROLS,
      failingSince: null,
      disabledReason: null,
      disabledAt: null,
    });
    const read = expectStatus(await server.request("GET", `/v1/endpoints/${created.id}`), 200);
    expect(read).toMatchObject(CONTROLS);
    const listed = expectStatus(await server.request("GET", "/v1/endpoints?limit=500"), 200);
    expect(listed.data.find((e: { id: string }) => e.id === created.id)).toMatchObject(CONTROLS);
  });

  test("defaults: no rate limit, schedule or filter; disableAfter 5d; burst defaults to perSecond", async () => {
    const plain = expectStatus(await server.request("POST", "/v1/endpoints", { url: URL }), 201);
    expect(plain).toMatchObject({ rateLimit: null, retrySchedule: null, filter: null, disableAfter: "5d" });
    const burst = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: URL, rateLimit: { perSecond: 7 } }),
      201,
    );
    expect(burst.rateLimit).toEqual({ perSecond: 7, burst: 7 });
    const pull = expectStatus(await server.request("POST", "/v1/endpoints", { kind: "pull" }), 201);
    expect(pull.disableAfter).toBe("never");
  });

  test("PATCH changes what it names, keeps the rest, and null removes rateLimit, retrySchedule, filter", async () => {
    const { id } = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: URL, ...CONTROLS }),
      201,
    );
    const changed = expectStatus(
      await server.request("PATCH", `/v1/endpoints/${id}`, { retrySchedule: ["1m"], disableAfter: "never" }),
      200,
    );
    expect(changed).toMatchObject({ ...CONTROLS, retrySchedule: ["1m"], disableAfter: "never" });
    const removed = expectStatus(
      await server.request("PATCH", `/v1/endpoints/${id}`, {
        rateLimit: null,
        retrySchedule: null,
        filter: null,
        disableAfter: null,
      }),
      200,
    );
    expect(removed).toMatchObject({
      rateLimit: null,
      retrySchedule: null,
      filter: null,
      disableAfter: "never",
    });
    expect(expectStatus(await server.request("GET", `/v1/endpoints/${id}`), 200)).toMatchObject({
      rateLimit: null,
      retrySchedule: null,
      filter: null,
    });
  });

  test("disabling by PATCH records reason operator and since when; enabling clears them", async () => {
    const { id } = expectStatus(await server.request("POST", "/v1/endpoints", { url: URL }), 201);
    const disabled = expectStatus(
      await server.request("PATCH", `/v1/endpoints/${id}`, { disabled: true }),
      200,
    );
    expect(disabled).toMatchObject({ disabled: true, disabledReason: "operator" });
    expect(typeof disabled.disabledAt).toBe("string");
    const enabled = expectStatus(await server.request("POST", `/v1/endpoints/${id}/enable`), 200);
    expect(enabled).toMatchObject({
      disabled: false,
      disabledReason: null,
      disabledDetail: null,
      disabledAt: null,
    });
  });
});

describe("refusals name the field", () => {
  const cases: [string, unknown, string][] = [
    ["perSecond 0", { rateLimit: { perSecond: 0 } }, "/rateLimit/perSecond"],
    ["perSecond over 10,000", { rateLimit: { perSecond: 10_001 } }, "/rateLimit/perSecond"],
    ["a fractional perSecond", { rateLimit: { perSecond: 1.5 } }, "/rateLimit/perSecond"],
    ["burst 0", { rateLimit: { perSecond: 5, burst: 0 } }, "/rateLimit/burst"],
    ["an unknown rate field", { rateLimit: { perSecond: 5, per: 1 } }, "/rateLimit/per"],
    ["an empty schedule", { retrySchedule: [] }, "/retrySchedule"],
    ["21 waits", { retrySchedule: Array(21).fill("5s") }, "/retrySchedule"],
    ["a wait under 1s", { retrySchedule: ["5s", "500ms"] }, "/retrySchedule/1"],
    ["a wait over 24h", { retrySchedule: ["25h"] }, "/retrySchedule/0"],
    ["a wait that is no duration", { retrySchedule: ["soon"] }, "/retrySchedule/0"],
    ["disableAfter under 1h", { disableAfter: "59m" }, "/disableAfter"],
    ["disableAfter that is no duration", { disableAfter: "always" }, "/disableAfter"],
    ["21 conditions", { filter: Array(21).fill({ path: "/type", op: "exists", value: true }) }, "/filter"],
    ["a path that is no pointer", { filter: [{ path: "data/x", op: "eq", value: 1 }] }, "/filter/0/path"],
    ["an unknown op", { filter: [{ path: "/data/x", op: "like", value: 1 }] }, "/filter/0/op"],
    ["in without an array", { filter: [{ path: "/data/x", op: "in", value: 1 }] }, "/filter/0/value"],
    [
      "in with 101 values",
      { filter: [{ path: "/data/x", op: "in", value: Array(101).fill(1) }] },
      "/filter/0/value",
    ],
    ["in with no value", { filter: [{ path: "/data/x", op: "in", value: [] }] }, "/filter/0/value"],
    [
      "exists with a string",
      { filter: [{ path: "/data/x", op: "exists", value: "yes" }] },
      "/filter/0/value",
    ],
    ["prefix with a number", { filter: [{ path: "/data/x", op: "prefix", value: 1 }] }, "/filter/0/value"],
    ["gt with a string", { filter: [{ path: "/data/x", op: "gt", value: "1" }] }, "/filter/0/value"],
    [
      "a value over 1 KiB",
      { filter: [{ path: "/data/x", op: "eq", value: "x".repeat(1100) }] },
      "/filter/0/value",
    ],
    ["a missing value", { filter: [{ path: "/data/x", op: "eq" }] }, "/filter/0/value"],
  ];
  for (const [name, body, pointer] of cases) {
    test(`${name}: 422 at ${pointer} on POST and PATCH`, async () => {
      expectProblem(
        await server.request("POST", "/v1/endpoints", { url: URL, ...(body as object) }),
        422,
        pointer,
      );
      const { id } = expectStatus(await server.request("POST", "/v1/endpoints", { url: URL }), 201);
      expectProblem(await server.request("PATCH", `/v1/endpoints/${id}`, body), 422, pointer);
    });
  }

  test("rateLimit and disableAfter are for webhook endpoints only; retrySchedule and filter fit pull ones", async () => {
    expectProblem(
      await server.request("POST", "/v1/endpoints", { kind: "pull", rateLimit: { perSecond: 5 } }),
      422,
      "/rateLimit",
    );
    expectProblem(
      await server.request("POST", "/v1/endpoints", { kind: "pull", disableAfter: "1d" }),
      422,
      "/disableAfter",
    );
    const pull = expectStatus(
      await server.request("POST", "/v1/endpoints", {
        kind: "pull",
        retrySchedule: ["2s"],
        filter: [{ path: "/type", op: "prefix", value: "return." }],
      }),
      201,
    );
    expectProblem(
      await server.request("PATCH", `/v1/endpoints/${pull.id}`, { rateLimit: { perSecond: 5 } }),
      422,
      "/rateLimit",
    );
  });
});

test("with OUTBOXD_ALLOW_FAILPOINTS=1 the shortest disableAfter is 1s", async () => {
  const testing = await startServer({ OUTBOXD_ALLOW_FAILPOINTS: "1" }, { dispatch: false });
  try {
    const ok = expectStatus(
      await testing.request("POST", "/v1/endpoints", { url: URL, disableAfter: "1s" }),
      201,
    );
    expect(ok.disableAfter).toBe("1s");
    expectProblem(
      await testing.request("POST", "/v1/endpoints", { url: URL, disableAfter: "500ms" }),
      422,
      "/disableAfter",
    );
  } finally {
    await testing.stop();
  }
});

test("endpoints that exist at upgrade keep disableAfter never; a 410 text becomes gone, any other operator", async () => {
  const dir = tempDir("outboxd-controls-migration-");
  const file = join(dir, "old.db");
  const url = `file:${file}`;
  try {
    const before = migrations.findIndex((m) => m.tag === "0017_endpoint_controls");
    expect(before).toBeGreaterThan(0);
    const old = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
    await old.writer.write(migrate(migrations.slice(0, before)));
    await old.close();
    const seed = new Database(file);
    const T = Date.parse("2026-11-20T10:00:00Z");
    seed.exec(`
      INSERT INTO endpoints (id, kind, url, event_types, secrets, disabled, disabled_reason, created_at, updated_at)
      VALUES ('ep_gone', 'webhook', '${URL}', '[]', '[]', 1, 'the receiver answered 410 Gone at 2026-11-20T10:00:00.000Z', ${T}, ${T}),
             ('ep_op', 'webhook', '${URL}', '[]', '[]', 1, 'disabled by an operator', ${T}, ${T}),
             ('ep_on', 'webhook', '${URL}', '[]', '[]', 0, NULL, ${T}, ${T});
    `);
    seed.close();
    const upgraded = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
    await upgraded.writer.write(migrate(migrations));
    const view = async (id: string) => await upgraded.driver.read(getEndpoint(id));
    expect(await view("ep_gone")).toMatchObject({
      disabled: true,
      disabledReason: "gone",
      disabledDetail: "the receiver answered 410 Gone at 2026-11-20T10:00:00.000Z",
      disabledAt: "2026-11-20T10:00:00.000Z",
      disableAfter: "never",
    });
    expect(await view("ep_op")).toMatchObject({
      disabledReason: "operator",
      disabledDetail: "disabled by an operator",
      disableAfter: "never",
    });
    expect(await view("ep_on")).toMatchObject({
      disabled: false,
      disabledReason: null,
      disableAfter: "never",
    });
    await upgraded.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
