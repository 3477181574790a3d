// The README is the front door: its quick start (`npm start`) and the shell blocks of its
// "Try it" section are run here, as printed, against a fresh server: `outboxd listen` in the
// background (a second terminal), the curl blocks in one shell (a third).
import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Child, REPO, startChild } from "./helpers/process.ts";
import { tempDir } from "./helpers/server.ts";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const dir = tempDir("outboxd-readme-");
let child: Child | undefined;
let listener: ReturnType<typeof Bun.spawn> | undefined;

afterAll(async () => {
  listener?.kill("SIGKILL");
  await listener?.exited;
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
  const [listen, ...shell] = blocks;
  expect(listen?.trim()).toBe("npx bun src/main.ts listen");
  expect(shell.length).toBeGreaterThanOrEqual(2);

  // The second terminal: `listen` beside the data folder (its token from data/admin-token). Port 0
  // instead of 3000: this machine may run other things on 3000.
  const data = { OUTBOXD: url, OUTBOXD_DATABASE_URL: `file:${join(dir, "data/outboxd.db")}` };
  listener = Bun.spawn({
    cmd: ["bash", "-c", `${(listen as string).trim()} --port 0`],
    cwd: REPO,
    env: { ...process.env, ...data },
    stdout: "pipe",
    stderr: "pipe",
  });
  const printed = { out: "", err: "" };
  for (const [stream, key] of [
    [listener.stdout, "out"],
    [listener.stderr, "err"],
  ] as const) {
    void (async () => {
      for await (const chunk of stream as ReadableStream<Uint8Array>)
        printed[key] += new TextDecoder().decode(chunk);
    })();
  }
  const until = async (what: string, ok: () => boolean) => {
    const deadline = Date.now() + 60_000;
    while (!ok()) {
      if (listener?.exitCode !== null) throw new Error(`listen exited:\n${printed.err}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within 60 s:\n${printed.out}\n${printed.err}`);
      await Bun.sleep(50);
    }
  };
  await until("receiving line", () => /pulling from|listening on/.test(printed.err));

  // The third terminal: every block in order in one shell session, as a reader would; curl is made
  // strict here (fail on HTTP errors) without cluttering the README. Each answer ends its line
  // (the README's `-w '\n'`), so the output is one JSON document per line.
  const script = `set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n${shell.join("\n")}`;
  const run = Bun.spawnSync(["bash", "-c", script], { cwd: dir, env: { ...process.env, OUTBOXD: url } });
  const out = run.stdout.toString();
  expect(run.stderr.toString()).toBe("");
  expect(run.exitCode).toBe(0);
  expect(out).toEndWith("\n");
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
  expect(answers[3]).toHaveProperty("pending");
  // A pull endpoint: the commit, the poll that leased its event, the ack.
  expect(answers[4].events[0]).toMatchObject({ type: "return.received", aggregate: "returns/r-125" });
  expect(answers[5].data.map((d: { event: { type: string } }) => d.event.type)).toEqual(["return.received"]);
  expect(answers[6]).toEqual({ acked: 1, nacked: 0, stale: [] });
  expect(answers).toHaveLength(7);

  // What the second terminal printed: every event, once, in order per aggregate.
  await until("three event lines", () => printed.out.trim().split("\n").length >= 3);
  const lines = printed.out
    .trim()
    .split("\n")
    .map((line) => line.replace(/^\d\d:\d\d:\d\d {2}/, ""));
  expect(lines).toContain("return.approved  returns/r-123 #1  applied");
  expect(lines).toContain("return.refunded  returns/r-123 #2  applied");
  expect(lines).toContain("return.received  returns/r-125 #1  applied");
  expect(lines.indexOf("return.approved  returns/r-123 #1  applied")).toBeLessThan(
    lines.indexOf("return.refunded  returns/r-123 #2  applied"),
  );
});
