// `outboxd listen` (src/cli/listen.ts) as a real child process: against a real outboxd it
// registers (then reuses) its webhook endpoint, or a pull endpoint where local URLs are refused,
// and prints one line per event; with --secret it verifies and applies once what it is sent.
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { expectStatus } from "./helpers/assertions.ts";
import { REPO } from "./helpers/process.ts";
import { startServer, type TestServer, tempDir } from "./helpers/server.ts";

interface Listener {
  proc: ReturnType<typeof Bun.spawn>;
  out(): string;
  err(): string;
  /** Resolves when `pattern` matches stdout (or stderr with `on: "err"`), else fails at the deadline. */
  waitFor(pattern: RegExp, on?: "out" | "err", timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number>;
}

const listeners: Listener[] = [];
const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const listener of listeners.splice(0)) {
    listener.proc.kill("SIGKILL");
    await listener.exited;
  }
  for (const server of servers.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function listen(args: string[], env: Record<string, string>, cwd = REPO): Listener {
  const proc = Bun.spawn({
    cmd: [process.execPath, join(REPO, "src/main.ts"), "listen", ...args],
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const text = { out: "", err: "" };
  const wakers: (() => void)[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>, key: "out" | "err") => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text[key] += decoder.decode(chunk);
      for (const wake of wakers.splice(0)) wake();
    }
  };
  void pump(proc.stdout, "out");
  void pump(proc.stderr, "err");
  const listener: Listener = {
    proc,
    out: () => text.out,
    err: () => text.err,
    exited: proc.exited,
    async waitFor(pattern, on = "out", timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = text[on].match(pattern);
        if (match) return match;
        if (proc.exitCode !== null) throw new Error(`listen exited ${proc.exitCode}:\n${text.err}`);
        if (Date.now() > deadline)
          throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${text.out}\n${text.err}`);
        await new Promise<void>((resolve) => {
          wakers.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
  };
  listeners.push(listener);
  return listener;
}

async function commit(server: TestServer, aggregate: string, payload: unknown) {
  const answer = expectStatus(
    await server.request("POST", "/v1/commits", { events: [{ type: "order.placed", aggregate, payload }] }),
    201,
  );
  return answer.events[0];
}

describe("registered with a token", () => {
  test("registers a local webhook endpoint, prints each event, and reuses the endpoint on restart", async () => {
    const server = await startServer();
    servers.push(server);
    const env = { OUTBOXD: server.url, OUTBOXD_TOKEN: server.token };
    const first = listen(["--port", "0", "--verbose"], env);
    const [, port] = await first.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)\/webhooks/, "err");
    expect(first.err()).toMatch(/registered endpoint ep_\w+/);
    await commit(server, "orders/o-1", { total: 42 });
    await first.waitFor(/order\.placed {2}orders\/o-1 #1 {2}applied\n/);
    await first.waitFor(/^ {2}\S+ {2}\{"total":42\}$/m);
    first.proc.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const second = listen(["--port", port as string], env);
    await second.waitFor(/listening on/, "err");
    expect(second.err()).toContain("registered before");
    await commit(server, "orders/o-1", { total: 43 });
    await second.waitFor(/order\.placed {2}orders\/o-1 #2 {2}applied/);
    const endpoints = expectStatus(await server.request("GET", "/v1/endpoints"), 200).data;
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0]).toMatchObject({ kind: "webhook", url: `http://127.0.0.1:${port}/webhooks` });
  });

  test("pulls instead where outboxd refuses local URLs, and reuses that pull endpoint", async () => {
    const server = await startServer({ OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "0" });
    servers.push(server);
    const env = { OUTBOXD: server.url, OUTBOXD_TOKEN: server.token };
    const first = listen(["--port", "0"], env);
    await first.waitFor(/pulling from ep_\w+/, "err");
    expect(first.err()).toContain("OUTBOXD_ALLOW_PRIVATE_ENDPOINTS=1");
    await commit(server, "orders/o-2", {});
    await first.waitFor(/order\.placed {2}orders\/o-2 #1 {2}applied/);
    first.proc.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const second = listen(["--port", "0"], env);
    await second.waitFor(/pulling from/, "err");
    expect(second.err()).toContain("registered before");
    const endpoints = expectStatus(await server.request("GET", "/v1/endpoints"), 200).data;
    expect(endpoints.map((e: { kind: string }) => e.kind)).toEqual(["pull"]);
  });

  test("--endpoint ID receives for that endpoint; an unknown id exits 2", async () => {
    const server = await startServer();
    servers.push(server);
    const env = { OUTBOXD: server.url, OUTBOXD_TOKEN: server.token };
    const unknown = listen(["--port", "0", "--endpoint", "ep_bogus"], env);
    expect(await unknown.exited).toBe(2);
    expect(unknown.err()).toContain("ep_bogus");
    const pull = expectStatus(await server.request("POST", "/v1/endpoints", { kind: "pull" }), 201);
    const named = listen(["--port", "0", "--endpoint", pull.id], env);
    await named.waitFor(new RegExp(`pulling from ${pull.id}`), "err");
    await commit(server, "orders/o-3", {});
    await named.waitFor(/orders\/o-3 #1 {2}applied/);

    // A webhook endpoint elsewhere: its secrets are read, and listen says where it sends.
    const hook = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/elsewhere" }),
      201,
    );
    const webhook = listen(["--port", "0", "--endpoint", hook.id], env);
    const [, here] = await webhook.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks)/, "err");
    expect(webhook.err()).toContain("sends to http://127.0.0.1:9/elsewhere, not here");
    expectStatus(await server.request("PATCH", `/v1/endpoints/${hook.id}`, { url: here }), 200);
    await commit(server, "orders/o-4", {});
    await webhook.waitFor(/orders\/o-4 #1 {2}applied/);
  });

  test("without a token or a secret: exit 2 saying where a token comes from", async () => {
    const dir = tempDir("outboxd-listen-");
    dirs.push(dir);
    const run = listen(["--port", "0"], {}, dir);
    expect(await run.exited).toBe(2);
    expect(run.err()).toContain("OUTBOXD_TOKEN");
    expect(run.err()).toContain("--secret");
  });
});

test("--secret: verifies each webhook with the snippet and applies it once (applied, duplicate, stale)", async () => {
  const secret = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
  const listener = listen(["--port", "0", "--secret", secret], {});
  const [, url] = await listener.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks)/, "err");
  const signer = new Webhook(secret);
  const send = async (id: string, sequence: number, sign = signer) => {
    const body = JSON.stringify({
      id,
      type: "order.shipped",
      timestamp: new Date().toISOString(),
      aggregate: "orders/o-9",
      sequence,
      data: {},
    });
    const now = new Date();
    const response = await fetch(url as string, {
      method: "POST",
      headers: {
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": sign.sign(id, now, body),
        "content-type": "application/json",
      },
      body,
    });
    return { status: response.status, body: await response.json() };
  };
  expect(await send("e1", 1)).toEqual({ status: 200, body: { result: "applied" } });
  expect(await send("e1", 1)).toEqual({ status: 200, body: { result: "duplicate" } });
  expect(await send("e2", 2)).toEqual({ status: 200, body: { result: "applied" } });
  expect(await send("e0", 1)).toEqual({ status: 200, body: { result: "stale" } });
  const forged = await send("e3", 3, new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`));
  expect(forged).toEqual({ status: 400, body: { error: "bad_signature" } });
  await listener.waitFor(/refused a webhook: bad_signature/, "err");
  const lines = listener.out().trim().split("\n");
  expect(lines.map((line) => line.replace(/^\d\d:\d\d:\d\d {2}/, ""))).toEqual([
    "order.shipped  orders/o-9 #1  applied",
    "order.shipped  orders/o-9 #1  duplicate",
    "order.shipped  orders/o-9 #2  applied",
    "order.shipped  orders/o-9 #1  stale",
  ]);
});
