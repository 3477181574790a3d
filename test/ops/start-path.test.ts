// What a start loads (cold start, issue 12): a process on a local file that has no event type
// with a schema never loads ajv, @libsql/client or the MCP SDK; the first schema loads ajv, and
// payloads are checked against it from then on.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/server.ts";

test("a commit on a local file loads neither ajv, @libsql/client nor the MCP SDK; the first schema loads ajv", async () => {
  const dir = tempDir("outboxd-start-path-");
  try {
    const child = Bun.spawn({
      cmd: [process.execPath, join(import.meta.dir, "start-path-probe.ts")],
      env: {
        PATH: process.env.PATH ?? "",
        OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
        OUTBOXD_ADMIN_TOKEN: `probe-admin-${crypto.randomUUID()}`,
        OUTBOXD_LOG_LEVEL: "error",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, out, err] = await Promise.all([
      child.exited,
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({
      statuses: [201, 201, 422],
      afterCommit: { ajv: false, libsqlClient: false, mcp: false },
      afterSchema: { ajv: true, libsqlClient: false, mcp: false },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
