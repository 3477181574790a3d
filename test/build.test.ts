// The one executable (`npm run build` → scripts/build.ts): built once into a temp dir, copied
// alone into an empty directory and run there as a real child, as it would run on a server
// without node_modules: migrate, serve, a commit delivered to a real receiver, SIGTERM.
// When the tests run as root with `unshare`, the executable also runs in a private mount
// namespace with the whole repository (node_modules included) hidden under an empty tmpfs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { apiClient } from "./helpers/api.ts";
import { expectStatus } from "./helpers/assertions.ts";
import { type OtlpReceiver, startOtlpReceiver } from "./helpers/otlp-receiver.ts";
import { type Child, REPO, startChild } from "./helpers/process.ts";
import { startReceiver, type TestReceiver, waitFor } from "./helpers/receiver.ts";
import { tempDir } from "./helpers/server.ts";

const buildDir = tempDir("outboxd-build-");
const runDir = tempDir("outboxd-exe-");
const binary = join(runDir, "outboxd");
const token = `build-admin-${crypto.randomUUID()}`;
let hideRepo: string[] = [];
let receiver: TestReceiver | undefined;
let otlp: OtlpReceiver | undefined;
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
let child: Child | undefined;

/** A command prefix that runs what follows with REPO hidden, or [] where that is not possible. */
function repoHidingPrefix(): string[] {
  if (process.getuid?.() !== 0 || !Bun.which("unshare")) return [];
  // `unshare` execs in place (no fork), so the pid the child logs is the pid we spawned.
  const prefix = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs tmpfs "$1" && shift && exec "$@"', "sh", REPO];
  const probe = Bun.spawnSync([...prefix, "sh", "-c", 'test -z "$(ls -A "$0")"', REPO]);
  return probe.exitCode === 0 ? prefix : [];
}

/** The public pages whose content is imported at build time, not read from disk at run time. */
async function expectEmbeddedPages(url: string): Promise<void> {
  // verify.ts is also code in the executable (`outboxd listen` runs it): served as its text still.
  for (const file of ["verify.js", "verify.ts"]) {
    const snippet = await fetch(`${url}/snippet/${file}`);
    expect(snippet.status).toBe(200);
    expect(await snippet.text()).toBe(readFileSync(join(REPO, "src/receiver", file), "utf8"));
  }
  const openapi = await fetch(`${url}/openapi.json`);
  expect(openapi.status).toBe(200);
  expect((await openapi.json()).info.version).toBe(
    JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version,
  );
  const docs = await fetch(`${url}/docs`);
  expect(docs.status).toBe(200);
  expect(docs.headers.get("content-type")).toStartWith("text/html");
}

const env = (extra: Record<string, string> = {}) => ({
  OUTBOXD_DATABASE_URL: `file:${join(runDir, "data", "outboxd.db")}`,
  ...extra,
});

beforeAll(async () => {
  const started = performance.now();
  const build = Bun.spawn({
    cmd: [process.execPath, "scripts/build.ts", "--outfile", join(buildDir, "outboxd")],
    cwd: REPO,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`npm run build failed (${code}):\n${stderr}`);
  copyFileSync(join(buildDir, "outboxd"), binary);
  rmSync(buildDir, { recursive: true, force: true });
  const mib = (statSync(binary).size / 1024 / 1024).toFixed(1);
  hideRepo = repoHidingPrefix();
  console.log(
    `built outboxd: ${mib} MiB in ${Math.round(performance.now() - started)} ms; ` +
      (hideRepo.length > 0
        ? "runs with the repository hidden (unshare)"
        : "runs from an empty temp dir (repository not hidden: needs root and unshare)"),
  );
}, 120_000);

afterAll(async () => {
  child?.kill("SIGKILL");
  await child?.exited;
  await receiver?.stop();
  await otlp?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

/** The executable's `migrate` in the empty directory, with `extra` added to its environment. */
async function migrate(
  extra: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn({
    cmd: [...hideRepo, binary, "migrate"],
    cwd: runDir,
    env: { PATH: "/usr/bin:/bin", HOME: runDir, ...env(extra) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  return { code, stdout, stderr };
}

describe("the built executable, alone in an empty directory", () => {
  test("is the only file there, and migrate applies the embedded migrations", async () => {
    expect(readdirSync(runDir)).toEqual(["outboxd"]);
    const { code, stdout, stderr } = await migrate({});
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/^applied: 0000_init/);
  });

  test("serve answers /healthz and /readyz, delivers a commit to a receiver, and exits 0 on SIGTERM", async () => {
    receiver = startReceiver();
    // Tracing on (the OpenTelemetry SDK is loaded on demand): it must be inside the executable too.
    otlp = startOtlpReceiver();
    const spawned = performance.now();
    child = startChild(
      [...hideRepo, binary, "serve"],
      {
        HOME: runDir,
        PATH: "/usr/bin:/bin",
        ...env({
          PORT: "0",
          OUTBOXD_ADMIN_TOKEN: token,
          OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
          OUTBOXD_MASTER_KEY: Buffer.alloc(32, 3).toString("base64"),
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        }),
      },
      runDir,
    );
    const url = await child.listening();
    const listeningMs = performance.now() - spawned;
    await waitFor("/readyz", async () => (await fetch(`${url}/readyz`)).status === 200, 10_000);
    console.log(
      `cold start: listening after ${Math.round(listeningMs)} ms, ` +
        `/readyz 200 after ${Math.round(performance.now() - spawned)} ms`,
    );
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    // Files embedded at build time (text and JSON imports, JSX) come out of the executable.
    await expectEmbeddedPages(url);

    // The MCP SDK is imported on the first /mcp request: that lazy import must be in the binary too.
    const mcp = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "build-test", version: "1" },
        },
      }),
    });
    expect(mcp.status).toBe(200);
    expect(((await mcp.json()) as { result?: { serverInfo?: unknown } }).result?.serverInfo).toBeDefined();

    const request = apiClient(url, token);
    expectStatus(await request("POST", "/v1/endpoints", { url: receiver.url, eventTypes: ["build.*"] }), 201);
    const committed = expectStatus(
      await request(
        "POST",
        "/v1/commits",
        {
          records: [{ collection: "builds", id: "b-1", expectedVersion: 0, data: { ok: true } }],
          events: [{ type: "build.checked", payload: { binary: "outboxd" } }],
        },
        { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
      ),
      201,
    );
    const [event] = committed.events;
    const deliveryId = event.deliveries[0].id as string;
    const [received] = await waitFor("the webhook", () =>
      receiver?.received.length ? receiver.received : undefined,
    );
    expect(received?.headers.get("webhook-id")).toBe(event.id);
    expect(JSON.parse(received?.body ?? "{}")).toMatchObject({
      type: "build.checked",
      data: { binary: "outboxd" },
    });
    await waitFor(
      "the delivery to be recorded as delivered",
      async () => (await request("GET", `/v1/deliveries/${deliveryId}`)).body.status === "delivered",
    );
    expect(expectStatus(await request("GET", "/v1/records/builds/b-1"), 200)).toMatchObject({
      version: 1,
      data: { ok: true },
    });

    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    expect(child.stderr()).toContain('"msg":"shutting down"');
    // Shutting down exported the queued spans: the request, the commit and the delivery.
    const names = otlp.spans.filter((s) => s.traceId === TRACE_ID).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["POST /v1/commits", "outboxd.commit", "outboxd.deliver"]));
    expect(received?.headers.get("traceparent")).toStartWith(`00-${TRACE_ID}-`);
  }, 60_000);
});
