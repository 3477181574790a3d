// An outboxd running in this test process: real SQLite file in a temp dir, real HTTP on
// 127.0.0.1 with port 0. Each call owns its database.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOutboxd, type Outboxd, type OutboxdOptions } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { apiClient, type Request } from "./api.ts";
import { onSqld, startSqld } from "./sqld.ts";
import { TEST_WRITES } from "./test-writes.ts";

export type { TestResponse } from "./api.ts";

export interface TestServer {
  url: string;
  dir: string;
  /** An admin token (OUTBOXD_ADMIN_TOKEN). */
  token: string;
  outboxd: Outboxd;
  request: Request;
  /** Its OUTBOXD_DATABASE_URL: a file in `dir`, or a libSQL server's URL (OUTBOXD_TEST_SQLD=1). */
  databaseUrl: string;
  stop(): Promise<void>;
}

export function tempDir(prefix = "outboxd-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * `where.local`: a file in `dir` even when the suites run on a libSQL server (OUTBOXD_TEST_SQLD=1),
 * for tests of what only a local file has (SQLite's own locks, files beside the database).
 */
export async function startServer(
  env: Record<string, string> = {},
  options: OutboxdOptions = {},
  where: { local?: boolean } = {},
): Promise<TestServer> {
  const dir = env.OUTBOXD_DATABASE_URL ? "" : tempDir();
  // OUTBOXD_TEST_SQLD=1 (.ci/run): a database of its own on a real libSQL server of its own.
  const sqld = onSqld() && !where.local && !env.OUTBOXD_DATABASE_URL ? await startSqld() : null;
  const token = `test-admin-${crypto.randomUUID()}`;
  const config = loadConfig({
    OUTBOXD_DATABASE_URL: sqld?.url ?? `file:${join(dir, "outboxd.db")}`,
    OUTBOXD_ADMIN_TOKEN: token,
    OUTBOXD_LOG_LEVEL: "error",
    OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    OUTBOXD_MASTER_KEY: Buffer.alloc(32, 7).toString("base64"),
    ...env,
  });
  // The tests' own named writes, on the writer thread too.
  const outboxd = await createOutboxd({ ...config, writerModules: [TEST_WRITES] }, options).catch(
    async (error: unknown) => {
      await sqld?.stop();
      throw error;
    },
  );
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: outboxd.http.fetch });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    dir,
    token,
    outboxd,
    request: apiClient(url, token),
    databaseUrl: config.databaseUrl,
    async stop() {
      await server.stop(true);
      await outboxd.stop();
      await sqld?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
