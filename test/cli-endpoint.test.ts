// `outboxd endpoint …` as a real child process against a real server (DESIGN §19 on the command
// line): set, show, enable, recover go through the HTTP API; a refusal names the pointer, exit 1.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectStatus } from "./helpers/assertions.ts";
import { REPO } from "./helpers/process.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
});
afterAll(async () => {
  await server.stop();
});

async function outboxd(args: string[]) {
  const child = Bun.spawn([process.execPath, "src/main.ts", "endpoint", ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", OUTBOXD_URL: server.url, OUTBOXD_TOKEN: server.token },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

test("set, show, enable and recover an endpoint's controls; a refusal names the field", async () => {
  const { id } = expectStatus(
    await server.request("POST", "/v1/endpoints", { url: "https://cli.example.com/h" }),
    201,
  );
  const set = await outboxd([
    "set",
    id,
    "--rate-limit",
    "20/40",
    "--retry-schedule",
    "5s,1m",
    "--disable-after",
    "2d",
    "--filter",
    '[{"path":"/type","op":"prefix","value":"order."}]',
    "--disabled",
    "true",
  ]);
  expect(set.code).toBe(0);
  expect(JSON.parse(set.stdout)).toMatchObject({
    rateLimit: { perSecond: 20, burst: 40 },
    retrySchedule: ["5s", "1m"],
    disableAfter: "2d",
    filter: [{ path: "/type", op: "prefix", value: "order." }],
    disabled: true,
    disabledReason: "operator",
  });
  const removed = await outboxd(["set", id, "--rate-limit", "none", "--filter", "none"]);
  expect(JSON.parse(removed.stdout)).toMatchObject({
    rateLimit: null,
    filter: null,
    retrySchedule: ["5s", "1m"],
  });
  const shown = await outboxd(["show", id]);
  expect(JSON.parse(shown.stdout).id).toBe(id);
  const recovered = await outboxd(["recover", id, "--since", "2026-01-01T00:00:00Z"]);
  expect(recovered.code).toBe(0);
  expect(JSON.parse(recovered.stdout)).toEqual({ replayed: 0, skipped: 0, enabled: true });
  const refused = await outboxd(["set", id, "--disable-after", "5m"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("/disableAfter");
  const usage = await outboxd(["set", id]);
  expect(usage.code).toBe(2);
});
