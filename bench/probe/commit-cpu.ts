// CPU per commit in process, for A/B between checkouts on a shared machine: the app's fetch
// handler, 64 commits in flight (one record created, one event each: the commit benchmark's body),
// FULL, no endpoint. After 2,048 commits of warm-up, blocks of 1,024: the main thread's CPU
// (JavaScript and SQLite) and the whole process's per commit, medians.
//   bun bench/probe/commit-cpu.ts [blocks=6]
//   ROOT=/path/to/other/checkout bun bench/probe/commit-cpu.ts    # the same probe on other code
import { rmSync } from "node:fs";
import { join } from "node:path";

const root = process.env.ROOT ?? join(import.meta.dir, "../..");
const { createOutboxd } = await import(join(root, "src/app.ts"));
const { loadConfig } = await import(join(root, "src/config.ts"));
const { COMMIT_BODY } = await import(join(root, "bench/scenarios/commit.ts"));
const { tempDir, median } = await import(join(root, "bench/lib.ts"));

const TOKEN = "bench-commit-cpu-token";
const blocks = Number(process.argv[2] ?? 6);
const dir = tempDir("outboxd-commit-cpu-");
const outboxd = await createOutboxd(
  loadConfig({
    OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
    OUTBOXD_ADMIN_TOKEN: TOKEN,
    OUTBOXD_LOG_LEVEL: "error",
    OUTBOXD_RATE_LIMIT: "0",
    OUTBOXD_SYNCHRONOUS: "FULL",
  }),
  { dispatch: false },
);
let next = 0;
const commit = async () => {
  const response = await outboxd.http.fetch(
    new Request("http://outboxd/v1/commits", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: COMMIT_BODY.replaceAll("[<id>]", String(next++)),
    }),
  );
  if (response.status !== 201)
    throw new Error(`commit answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
};
const block = async (count: number) => {
  const thread = process.threadCpuUsage();
  const all = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = 0; i < count / 64; i++) await commit();
    }),
  );
  const t = process.threadCpuUsage(thread);
  const a = process.cpuUsage(all);
  return { main: (t.user + t.system) / count, all: (a.user + a.system) / count };
};
const main: number[] = [];
const all: number[] = [];
try {
  await block(2048);
  for (let i = 0; i < blocks; i++) {
    const used = await block(1024);
    main.push(used.main);
    all.push(used.all);
  }
} finally {
  await outboxd.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify({
    root,
    mainThreadUsPerCommit: +median(main).toFixed(1),
    processUsPerCommit: +median(all).toFixed(1),
  }),
);
