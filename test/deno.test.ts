// The same Hono app under Deno (src/deno.ts, `npm run start:deno`), as a real child of the Deno
// that package.json's devDependencies install: a commit, the record read back, the event
// delivered to a receiver by the dispatcher running in Deno, SIGTERM. Deno must not download
// anything: --no-remote, a fresh DENO_DIR, no update check; npm packages come from node_modules
// (deno.json: nodeModulesDir "manual").
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { apiClient } from "./helpers/api.ts";
import { expectStatus } from "./helpers/assertions.ts";
import { startOtlpReceiver } from "./helpers/otlp-receiver.ts";
import { type Child, REPO, startChild } from "./helpers/process.ts";
import { startReceiver, waitFor } from "./helpers/receiver.ts";
import { tempDir } from "./helpers/server.ts";

const DENO = join(REPO, "node_modules/.bin/deno");
const dirs: string[] = [];
const children: Child[] = [];
const receivers: { stop(): Promise<void> }[] = [];
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

afterAll(async () => {
  for (const child of children) {
    child.kill("SIGKILL");
    await child.exited;
  }
  for (const receiver of receivers) await receiver.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function startDeno(extra: Record<string, string> = {}): { child: Child; token: string; denoDir: string } {
  const dir = tempDir("outboxd-deno-");
  dirs.push(dir);
  const token = `deno-admin-${crypto.randomUUID()}`;
  const denoDir = join(dir, "deno-dir");
  const child = startChild([DENO, "run", "-A", "--no-remote", "src/deno.ts"], {
    DENO_DIR: denoDir,
    DENO_NO_UPDATE_CHECK: "1",
    NO_COLOR: "1",
    PORT: "0",
    OUTBOXD_DATABASE_URL: `file:${join(dir, "data", "outboxd.db")}`,
    OUTBOXD_ADMIN_TOKEN: token,
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OUTBOXD_MASTER_KEY: Buffer.alloc(32, 5).toString("base64"),
    ...extra,
  });
  children.push(child);
  return { child, token, denoDir };
}

describe("src/deno.ts under Deno", () => {
  test("serves the API on a local file (libsql's SQLite): commit, read back, deliver, stop on SIGTERM", async () => {
    const receiver = startReceiver();
    receivers.push(receiver);
    // Tracing on: the OpenTelemetry SDK, loaded on demand, must work under Deno too.
    const otlp = startOtlpReceiver();
    receivers.push(otlp);
    const started = performance.now();
    const { child, token, denoDir } = startDeno({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
    const url = await child.listening(60_000);
    console.log(`deno: listening after ${Math.round(performance.now() - started)} ms`);
    expect(child.stderr()).toContain('"runtime":"deno"');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await waitFor("/readyz", async () => (await fetch(`${url}/readyz`)).status === 200, 10_000);

    // Imports that bundlers and runtimes treat specially (text, JSON, JSX) work under Deno too.
    const snippet = await fetch(`${url}/snippet/verify.js`);
    expect(await snippet.text()).toBe(readFileSync(join(REPO, "src/receiver/verify.js"), "utf8"));
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${url}/docs`)).headers.get("content-type")).toStartWith("text/html");

    const request = apiClient(url, token);
    expectStatus(await request("POST", "/v1/endpoints", { url: receiver.url, eventTypes: ["order.*"] }), 201);
    const committed = expectStatus(
      await request(
        "POST",
        "/v1/commits",
        {
          records: [{ collection: "orders", id: "o-1", expectedVersion: 0, data: { total: 42 } }],
          events: [{ type: "order.placed", payload: { orderId: "o-1" } }],
        },
        { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
      ),
      201,
    );
    expect(committed.records).toEqual([{ collection: "orders", id: "o-1", version: 1, deleted: false }]);
    const record = expectStatus(await request("GET", "/v1/records/orders/o-1"), 200);
    expect(record).toMatchObject({ id: "o-1", version: 1, data: { total: 42 } });

    const [event] = committed.events;
    await waitFor("the webhook", () => receiver.received.length > 0);
    expect(receiver.received[0]?.headers.get("webhook-id")).toBe(event.id);
    expect(JSON.parse(receiver.received[0]?.body ?? "{}")).toMatchObject({
      type: "order.placed",
      aggregate: "orders/o-1",
      data: { orderId: "o-1" },
    });
    const deliveryId = event.deliveries[0].id as string;
    await waitFor(
      "the delivery to be recorded as delivered",
      async () => (await request("GET", `/v1/deliveries/${deliveryId}`)).body.status === "delivered",
    );

    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    expect(child.stderr()).toContain('"msg":"shutting down"');
    // Shutting down exported the queued spans: the request, the commit and the delivery.
    const names = otlp.spans.filter((s) => s.traceId === TRACE_ID).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["POST /v1/commits", "outboxd.commit", "outboxd.deliver"]));
    expect(receiver.received[0]?.headers.get("traceparent")).toStartWith(`00-${TRACE_ID}-`);
    // Nothing was fetched: Deno's npm cache stayed empty (the packages came from node_modules).
    const npmCache = join(denoDir, "npm");
    expect(existsSync(npmCache) ? readdirSync(npmCache) : []).toEqual([]);
  }, 90_000);
});
