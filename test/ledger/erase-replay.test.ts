// Erasure and replay (DESIGN §13): `outboxd erase --event` is refused while a delivery of the
// event is pending (exit 1); once its deliveries are dead it erases, and those dead deliveries
// can no longer be replayed: 409 `event-erased` for one, skipped by a bulk replay (REST and CLI),
// so a receiver is never sent an erased payload.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { REPO } from "../helpers/process.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";

let dir: string;
let file: string;
let server: TestServer;

function outboxd(args: string[]) {
  const run = Bun.spawnSync([process.execPath, "src/main.ts", ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", OUTBOXD_DATABASE_URL: `file:${file}`, OUTBOXD_LOG_LEVEL: "error" },
  });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

beforeAll(async () => {
  dir = tempDir("outboxd-erase-replay-");
  file = join(dir, "outboxd.db");
  server = await startServer({ OUTBOXD_DATABASE_URL: `file:${file}` }, { dispatch: false });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("an event with a pending delivery is not erased; once dead it is, and its dead delivery is never replayed", async () => {
  const endpoint = expectStatus(
    await server.request("POST", "/v1/endpoints", {
      url: "http://127.0.0.1:9/hook",
      eventTypes: ["person.*"],
    }),
    201,
  );
  const answer = expectStatus(
    await server.request("POST", "/v1/commits", {
      events: [{ type: "person.noted", aggregate: "people/p-1", payload: { email: "p@example.com" } }],
    }),
    201,
  );
  const eventId = answer.events[0].id as string;
  const deliveryId = answer.events[0].deliveries[0].id as string;
  expect(answer.events[0].deliveries[0].endpointId).toBe(endpoint.id);

  const refused = outboxd(["erase", "--event", eventId]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("pending");

  expectStatus(await server.request("POST", `/v1/deliveries/${deliveryId}/cancel`), 200);
  const erased = outboxd(["erase", "--event", eventId]);
  expect(erased.stderr).toBe("");
  expect(erased.code).toBe(0);

  const replay = expectProblem(await server.request("POST", `/v1/deliveries/${deliveryId}/replay`), 409);
  expect(replay.type).toEndWith("/event-erased");
  expect(replay.detail).toContain(eventId);
  expect(
    expectStatus(await server.request("POST", "/v1/deliveries/replay", { status: "dead" }), 200),
  ).toEqual({
    replayed: 0,
  });
  const cli = outboxd(["replay", "--status", "dead"]);
  expect(cli.code).toBe(0);
  expect(cli.stdout).toContain("replayed 0");
  const delivery = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}`), 200);
  expect(delivery.status).toBe("dead");
});
