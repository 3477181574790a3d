// The README's TypeScript example (@outboxd/client next to the curl commands), run as printed
// against a fresh server, with the package specifier pointed at this checkout.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers/process.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";

let server: TestServer;
const dir = tempDir("outboxd-readme-client-");
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the README's @outboxd/client example runs as printed", async () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const start = readme.indexOf("<!-- client-example");
  expect(start).toBeGreaterThan(0);
  const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(start))?.[1] ?? "";
  expect(code).toContain('from "@outboxd/client"');
  const file = join(dir, "example.ts");
  writeFileSync(file, code.replace('"@outboxd/client"', JSON.stringify(join(REPO, "clients/typescript"))));
  const run = Bun.spawn({
    cmd: [process.execPath, file],
    env: { PATH: process.env.PATH ?? "", OUTBOXD: server.url, OUTBOXD_TOKEN: server.token },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [exit, out, err] = await Promise.all([
    run.exited,
    new Response(run.stdout).text(),
    new Response(run.stderr).text(),
  ]);
  expect(err).toBe("");
  expect(exit).toBe(0);
  expect(out.trim().split("\n")).toEqual([
    "committed returns/r-124 #1",
    "conflict: r-124 is at version 1",
    "return.approved 1",
  ]);
});
