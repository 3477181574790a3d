// Where webhook requests are made (OUTBOXD_SEND_THREAD, default `auto`): a standalone dispatcher
// (`outboxd dispatch`) makes them on its own thread, which serves nothing else; `serve` hands them
// to a send worker, so the HTTP API keeps its thread; `worker` and `main` say so explicitly.
// Observed from outside, in real child processes: the send worker is a thread Bun names "Worker"
// that starts with the first request, so the processes are compared by their Worker threads once a
// webhook of each has arrived (the checkpoint worker, and the writer thread when CI runs with one,
// are the same in all of them).
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sendWorkerSupported } from "../../src/dispatch/send-worker.ts";
import { apiClient } from "../helpers/api.ts";
import { type Child, startChild } from "../helpers/process.ts";
import { startReceiver, type TestReceiver } from "../helpers/receiver.ts";
import { startServer, tempDir } from "../helpers/server.ts";
import { commitEvents, expectStatus, waitUntil } from "./harness.ts";

const TOKEN = `send-thread-admin-${crypto.randomUUID()}`;
const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  // On failure too: no child may outlive the suite.
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Threads of a process that Bun names "Worker". */
function workerThreads(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() === "Worker") n += 1;
    } catch {
      // the thread ended since the listing
    }
  }
  return n;
}

/**
 * `more` has exactly one Worker thread more than `fewer`, once their threads have settled: on a
 * busy machine one may still be starting or ending (CI once counted 4 against 2, alone 3 against 2).
 */
async function expectOneWorkerMore(more: Child, fewer: Child): Promise<void> {
  const settled = () => workerThreads(more.proc.pid) === workerThreads(fewer.proc.pid) + 1;
  await waitUntil("one Worker thread more", settled).catch(() => {});
  expect(workerThreads(more.proc.pid)).toBe(workerThreads(fewer.proc.pid) + 1);
}

function start(command: "serve" | "dispatch", file: string, env: Record<string, string>): Child {
  const child = startChild([process.execPath, "src/main.ts", command], {
    PORT: "0",
    OUTBOXD_DATABASE_URL: `file:${file}`,
    OUTBOXD_ADMIN_TOKEN: TOKEN,
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OUTBOXD_LOG_LEVEL: "info",
    ...env,
  });
  cleanup.push(async () => {
    child.kill("SIGKILL");
    await child.exited;
  });
  return child;
}

/** A `serve` (sending as `env` says) with an endpoint; resolves once one webhook arrived. */
async function serveOne(receiver: TestReceiver, env: Record<string, string>): Promise<Child> {
  const dir = tempDir("outboxd-send-thread-");
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const child = start("serve", join(dir, "outboxd.db"), env);
  const api = apiClient(await child.listening(), TOKEN);
  expectStatus(await api("POST", "/v1/endpoints", { url: receiver.url }), 201);
  const before = receiver.received.length;
  expectStatus(
    await api("POST", "/v1/commits", { events: [{ type: "t.x", aggregate: "a/1", payload: {} }] }),
    201,
  );
  await waitUntil("the webhook", () => receiver.received.length > before);
  return child;
}

/**
 * `outboxd dispatch` (sending as `env` says) on a database an in-process server without a
 * dispatcher of its own committed one event to; resolves once the webhook arrived.
 */
async function dispatchOne(receiver: TestReceiver, env: Record<string, string>): Promise<Child> {
  const dir = tempDir("outboxd-send-thread-");
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "outboxd.db");
  const server = await startServer({ OUTBOXD_DATABASE_URL: `file:${file}` }, { dispatch: false });
  cleanup.push(() => server.stop());
  expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
  const before = receiver.received.length;
  await commitEvents(server, [{ aggregate: "a/1", payload: {} }]);
  // The key test/helpers/server.ts seals endpoint secrets with.
  const child = start("dispatch", file, {
    OUTBOXD_MASTER_KEY: Buffer.alloc(32, 7).toString("base64"),
    ...env,
  });
  await waitUntil("the webhook", () => receiver.received.length > before);
  return child;
}

describe.if(sendWorkerSupported() && process.platform === "linux")("where webhook requests are made", () => {
  test("outboxd dispatch makes them on its own thread by default, serve on a send worker; OUTBOXD_SEND_THREAD overrides both", async () => {
    const receiver = startReceiver();
    cleanup.push(() => receiver.stop());
    const dispatcher = await dispatchOne(receiver, {});
    const dispatcherOnWorker = await dispatchOne(receiver, { OUTBOXD_SEND_THREAD: "worker" });
    await expectOneWorkerMore(dispatcherOnWorker, dispatcher);
    const served = await serveOne(receiver, {});
    const servedOnMain = await serveOne(receiver, { OUTBOXD_SEND_THREAD: "main" });
    await expectOneWorkerMore(served, servedOnMain);
  }, 60_000);
});
