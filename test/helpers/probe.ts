// A probe script run as a real child process on a fresh local database (a temp dir, removed
// after): for checks that need a process of their own, such as which modules a start loads.
// Resolves with the JSON the probe printed on stdout; fails if it wrote to stderr or exited non-zero.
import { expect } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./server.ts";

export async function runProbe(script: string): Promise<unknown> {
  const dir = tempDir("outboxd-probe-");
  try {
    const child = Bun.spawn({
      cmd: [process.execPath, script],
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
    return JSON.parse(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
