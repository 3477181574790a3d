// The database files are readable by their owner only: they hold every
// payload and, without a master key, the endpoints' signing secrets. Checked with fs.stat on
// the real files a real server and a real `outboxd backup` child process create, under the
// usual umask 022 that would otherwise leave them 0644.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { expectStatus } from "../helpers/assertions.ts";
import { REPO } from "../helpers/process.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("database files are 0600", () => {
  const dir = tempDir("outboxd-modes-");
  const file = join(dir, "data", "outboxd.db");
  let server: TestServer;
  let umask: number;
  beforeAll(async () => {
    umask = process.umask(0o022);
    server = await startServer({ OUTBOXD_DATABASE_URL: `file:${file}` }, { dispatch: false });
    expectStatus(
      await server.request("POST", "/v1/commits", {
        records: [{ collection: "modes", id: "m-1", data: { secret: "payload" } }],
        events: [{ type: "modes.made" }],
      }),
      201,
    );
  });
  afterAll(async () => {
    await server.stop();
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the database file, its WAL and its shared-memory file", () => {
    for (const path of [file, `${file}-wal`, `${file}-shm`]) {
      expect(existsSync(path)).toBe(true);
      expect({ path, mode: mode(path) }).toEqual({ path, mode: "600" });
    }
  });

  test("a backup written by `outboxd backup`", () => {
    const copy = join(dir, "backup.db");
    const run = Bun.spawnSync([process.execPath, "src/main.ts", "backup", copy], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "", OUTBOXD_DATABASE_URL: `file:${file}`, OUTBOXD_LOG_LEVEL: "error" },
    });
    expect(run.exitCode).toBe(0);
    expect(mode(copy)).toBe("600");
  });
});
