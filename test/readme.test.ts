// The README is the front door: its quick start (`npm start`) and the shell blocks of its
// "Try it" section are run here, as printed, against a fresh server.
import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Child, REPO, startChild } from "./helpers/process.ts";
import { tempDir } from "./helpers/server.ts";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const dir = tempDir("outboxd-readme-");
let child: Child | undefined;

afterAll(async () => {
  child?.kill("SIGTERM");
  await child?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** The ```sh blocks between the readme-test marker and the next section. */
function tryItBlocks(): string[] {
  const start = readme.indexOf("<!-- readme-test");
  const end = readme.indexOf("\n## ", start);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

test("the quick start's commands are the ones package.json runs", () => {
  expect(readme).toContain("npm ci && npm start");
  expect(readme).toContain("npm test");
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
  expect(pkg.scripts.start).toBe("bun src/main.ts serve");
  expect(pkg.scripts.test).toStartWith("bun test");
});

test("npm start serves, and every Try it command works as printed", async () => {
  child = startChild(["npm", "start"], {
    PORT: "0",
    OUTBOXD_DATABASE_URL: `file:${join(dir, "data/outboxd.db")}`,
    OUTBOXD_LOG_LEVEL: "info",
  });
  const url = await child.listening();
  const blocks = tryItBlocks();
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  // The same shell session runs every block in order, as a reader would; curl is made strict
  // here (fail on HTTP errors, one answer per line) without cluttering the README.
  const script = `set -euo pipefail\ncurl() { command curl --fail-with-body -w '\\n' "$@"; }\n${blocks.join("\n")}`;
  const run = Bun.spawnSync(["bash", "-c", script], { cwd: dir, env: { ...process.env, OUTBOXD: url } });
  const out = run.stdout.toString();
  expect(run.stderr.toString()).toBe("");
  expect(run.exitCode).toBe(0);
  const answers = out
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(answers[0].records[0]).toEqual({ collection: "returns", id: "r-123", version: 1, deleted: false });
  expect(answers[0].events[0]).toMatchObject({
    type: "return.approved",
    aggregate: "returns/r-123",
    sequence: 1,
  });
  expect(answers[1]).toMatchObject({ id: "r-123", version: 1, data: { status: "approved" } });
  expect(answers[2].records[0].version).toBe(2);
  expect(answers[3].secret).toStartWith("whsec_");
  expect(answers[4]).toHaveProperty("pending");
  // A pull endpoint: the commit, the poll that leased its event, the ack.
  expect(answers[5].events[0]).toMatchObject({ type: "return.received", aggregate: "returns/r-125" });
  expect(answers[6].data.map((d: { event: { type: string } }) => d.event.type)).toEqual(["return.received"]);
  expect(answers[7]).toEqual({ acked: 1, nacked: 0, stale: [] });
});
