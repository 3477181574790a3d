// Client CPU of one group's write batch sent to the simulated libSQL server (test/helpers/sim-server.ts),
// by @libsql/client's `batch` and by outboxd's own Hrana batcher (src/db/hrana-batch.ts), alternated:
// 100 INSERTs of 9 named arguments each (a group commit's batch carries ~5 statements per commit).
//   npx bun bench/probe/remote-batch.ts
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { spawn } from "bun";
import { hranaBatcher } from "../../src/db/hrana-batch.ts";
import { SIM_SERVER_RUNTIME_ENV } from "../../test/helpers/sim-server.ts";
import { BUN, REPO, tempDir } from "../lib.ts";

const dir = tempDir("outboxd-probe-remote-batch-");
const server = spawn({
  cmd: [BUN, "test/helpers/sim-server.ts", join(dir, "x.db"), "NORMAL"],
  cwd: REPO,
  env: { ...process.env, ...SIM_SERVER_RUNTIME_ENV },
  stdout: "pipe",
});
const reader = server.stdout.getReader();
const url = /ready (\S+)/.exec(new TextDecoder().decode((await reader.read()).value))?.[1] as string;
try {
  const client = createClient({ url, intMode: "number" });
  const lean = hranaBatcher(url, undefined);
  if (!lean) throw new Error("no batcher for the simulated server's URL");
  await client.execute(
    "CREATE TABLE t (a TEXT, b TEXT, c INTEGER, d TEXT, e INTEGER, f INTEGER, g TEXT, h TEXT, i TEXT)",
  );
  const statements = (k: number) =>
    Array.from({ length: 100 }, (_, j) => ({
      sql: "INSERT INTO t (a, b, c, d, e, f, g, h, i) VALUES (:a, :b, :c, :d, :e, :f, :g, :h, :i)",
      args: {
        a: "orders",
        b: `o-${k}-${j}`,
        c: 1,
        d: '{"status":"paid","total":1250}',
        e: 0,
        f: Date.now(),
        g: "01JF3Z6X8Y9ABCDEFGHJKMNPQR",
        h: "a3f1c2d4e5b6a7980123456789abcdef0123456789abcdef0123456789abcdef",
        i: null,
      },
    }));
  const ways = {
    "@libsql/client batch": (k: number) => client.batch(statements(k), "write"),
    "hrana-batch.ts": (k: number) => lean.batch(statements(k), "write"),
  };
  for (let round = 0; round < 3; round++) {
    for (const [name, send] of Object.entries(ways)) {
      for (let i = 0; i < 20; i++) await send(i);
      const n = 200;
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) await send(i);
      const used = process.cpuUsage(before);
      console.log(`${name}: ${Math.round((used.user + used.system) / n)} µs of client CPU per batch of 100`);
    }
  }
} finally {
  server.kill();
  await server.exited;
}
