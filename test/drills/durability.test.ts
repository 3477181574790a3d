// Durability belongs to SQLite (DESIGN §1.8), proven with real processes on a disk made slow or
// failing: test/helpers/slow-disk.c, an LD_PRELOAD library built here with `cc`, wraps fsync and
// fdatasync of the outboxd processes (Bun links glibc dynamically, so it sees bun:sqlite's syncs).
// It acts only while a trigger file exists, so the processes start and migrate at full speed.
//  - Every database sync slowed: `serve` and a separate `outboxd dispatch` on the same file; no
//    webhook arrives while its commit's sync is still running, only once the commit is answered.
//  - One failed sync: the serve process answers nothing more (no HTTP answer, success or problem),
//    logs one error line naming the database and the SQLite code, and exits 1; restarted without
//    the failing disk it commits, `outboxd verify` passes, and every commit answered 2xx is there.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { apiClient, type Request } from "../helpers/api.ts";
import { type Child, REPO, startChild } from "../helpers/process.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/server.ts";

const TOKEN = `durability-admin-${crypto.randomUUID()}`;
/** How long each slowed sync takes. */
const SLOW_MS = 2_000;

let shim = "";
const shimDir = tempDir("outboxd-slow-disk-");

beforeAll(() => {
  shim = join(shimDir, "slow-disk.so");
  const source = join(REPO, "test/helpers/slow-disk.c");
  let built: { exitCode: number | null; stderr: unknown };
  try {
    built = Bun.spawnSync(["cc", "-shared", "-fPIC", "-o", shim, source, "-ldl"]);
  } catch (error) {
    built = { exitCode: null, stderr: String(error) };
  }
  if (built.exitCode !== 0) {
    throw new Error(
      `cc could not build the slow-disk library (install a C compiler: scripts/ensure-cc.sh): ${built.stderr}`,
    );
  }
});

afterAll(() => rmSync(shimDir, { recursive: true, force: true }));

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface Setup {
  dir: string;
  databaseUrl: string;
  /** While this file exists, the slow disk acts. */
  trigger: string;
}

function setup(): Setup {
  const dir = tempDir("outboxd-durability-");
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, databaseUrl: `file:${join(dir, "outboxd.db")}`, trigger: join(dir, "disk-trigger") };
}

function start(s: Setup, command: "serve" | "dispatch", disk: Record<string, string> | null): Child {
  const child = startChild([process.execPath, "src/main.ts", command], {
    PORT: "0",
    OUTBOXD_DATABASE_URL: s.databaseUrl,
    OUTBOXD_ADMIN_TOKEN: TOKEN,
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OUTBOXD_LOG_LEVEL: "info",
    ...(disk ? { LD_PRELOAD: shim, SLOW_DISK_TRIGGER: s.trigger, ...disk } : {}),
  });
  cleanup.push(async () => {
    child.kill("SIGKILL");
    await child.exited;
  });
  return child;
}

async function serve(s: Setup, disk: Record<string, string> | null): Promise<{ child: Child; api: Request }> {
  const child = start(s, "serve", disk);
  return { child, api: apiClient(await child.listening(), TOKEN) };
}

async function addEndpoint(api: Request, receiver: TestReceiver): Promise<void> {
  const answer = await api("POST", "/v1/endpoints", {
    url: receiver.url,
    secret: `whsec_${Buffer.alloc(32, 3).toString("base64")}`,
  });
  expect(answer.status).toBe(201);
}

function commitBody(id: string, deliverAfter?: string) {
  return {
    records: [{ collection: "orders", id, data: { id } }],
    events: [{ type: "order.placed", payload: { id }, ...(deliverAfter ? { deliverAfter } : {}) }],
  };
}

describe("durability on a slow or failing disk (DESIGN §1.8)", () => {
  test("every sync slowed: with serve and a separate dispatch process, no webhook is sent before its commit is durable", async () => {
    const s = setup();
    const receiver = startReceiver();
    cleanup.push(() => receiver.stop());
    const disk = { SLOW_DISK_DELAY_MS: String(SLOW_MS) };
    const { api } = await serve(s, disk);
    await addEndpoint(api, receiver);
    const dispatcher = start(s, "dispatch", disk);
    await waitFor("the dispatch process", () => dispatcher.stderr().includes('"msg":"dispatching"'), 30_000);

    writeFileSync(s.trigger, "");
    cleanup.push(() => rmSync(s.trigger, { force: true }));
    const figures: { answeredMs: number; arrivedMs: number }[] = [];
    for (const id of ["d-1", "d-2"]) {
      const sent = Date.now();
      // Due long before its commit's sync ends: a process that could see the commit before it
      // is durable (the dispatch process sweeps every second) would send it then.
      const deliverAfter = new Date(sent + SLOW_MS / 4).toISOString();
      const before = receiver.received.length;
      const answer = await api("POST", "/v1/commits", commitBody(id, deliverAfter));
      const answered = Date.now();
      expect(answer.status).toBe(201);
      const arrival = await waitFor(
        `the webhook of ${id}`,
        () => receiver.received.slice(before).find((r) => r.body.includes(`"id":"${id}"`)),
        30_000,
      );
      figures.push({ answeredMs: answered - sent, arrivedMs: arrival.at - sent });
      // The commit's answer waited for its slowed sync...
      expect(answered - sent).toBeGreaterThanOrEqual(SLOW_MS);
      // ...and its webhook was not sent before that sync ended: the sync began after the request
      // was sent and took SLOW_MS, so a webhook of a commit seen before it was durable arrives
      // earlier than sent + SLOW_MS (it was due at sent + SLOW_MS / 4). The answer itself may
      // reach this busy test process after the webhook does, so the answer's time is no bound.
      expect(arrival.at).toBeGreaterThanOrEqual(sent + SLOW_MS);
    }
    console.log(
      `slowed syncs of ${SLOW_MS} ms: ${figures
        .map((f) => `answered after ${f.answeredMs} ms, webhook arrived after ${f.arrivedMs} ms`)
        .join("; ")}`,
    );
  }, 120_000);

  test("one failed sync: serve answers nothing more, logs one error line, exits 1; after a restart it commits, verify passes, every 2xx commit is there", async () => {
    const s = setup();
    const { child, api } = await serve(s, { SLOW_DISK_FAIL_AFTER: "0" });
    const acknowledged: string[] = [];
    for (const id of ["a-1", "a-2", "a-3"]) {
      const answer = await api("POST", "/v1/commits", commitBody(id));
      expect(answer.status).toBe(201);
      acknowledged.push(id);
    }

    // Commits keep coming, 8 at a time, while the disk starts failing: the first sync after it
    // fails and the process stops. Every answer any of them got is a 201; the rest got none.
    let stop = false;
    const answers: { id: string; status: number | "no answer" }[] = [];
    let serial = 0;
    const client = async () => {
      while (!stop) {
        const id = `b-${serial++}`;
        try {
          const answer = await api("POST", "/v1/commits", commitBody(id));
          answers.push({ id, status: answer.status });
        } catch {
          answers.push({ id, status: "no answer" });
          return;
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    await waitFor("some commits before the disk fails", () => answers.length >= 16, 30_000);
    writeFileSync(s.trigger, "");
    const code = await child.exited;
    stop = true;
    await Promise.all(clients);

    expect(code).toBe(1);
    expect(answers.filter((a) => a.status === "no answer").length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status !== 201 && a.status !== "no answer")).toEqual([]);
    const errors = child
      .stderr()
      .split("\n")
      .filter((line) => line.includes('"level":"error"'));
    expect(errors).toHaveLength(1);
    const error = JSON.parse(errors[0] as string);
    expect(error).toMatchObject({ database: join(s.dir, "outboxd.db"), code: "SQLITE_IOERR_FSYNC" });
    for (const a of answers) if (a.status === 201) acknowledged.push(a.id);

    // Restarted on a sound disk: SQLite's recovery, a commit, the ledger, every 2xx commit.
    rmSync(s.trigger, { force: true });
    const again = await serve(s, null);
    expect((await again.api("POST", "/v1/commits", commitBody("after"))).status).toBe(201);
    for (const id of acknowledged) {
      expect({ id, status: (await again.api("GET", `/v1/records/orders/${id}`)).status }).toEqual({
        id,
        status: 200,
      });
    }
    const verify = startChild([process.execPath, "src/main.ts", "verify"], {
      OUTBOXD_DATABASE_URL: s.databaseUrl,
    });
    expect(await verify.exited).toBe(0);
    console.log(
      `failed sync: ${acknowledged.length} commits answered 201 before it, all present after the restart; ` +
        `${answers.filter((a) => a.status === "no answer").length} requests got no answer`,
    );
  }, 120_000);
});
