// Scenario 5: cold start of the compiled executable to /readyz answering 200, and its idle RSS.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { BUN, freePort, type Range, REPO, rangeOf, rssMb, tempDir } from "../lib.ts";

export interface ColdStartRow {
  binaryMb: number;
  coldStartMs: Range;
  idleRssMb: number;
}

export async function coldStartScenario(runs: number): Promise<ColdStartRow> {
  const out = join(tempDir("outboxd-bench-bin-"), "outboxd");
  const build = Bun.spawnSync([BUN, "scripts/build.ts", "--outfile", out], {
    cwd: REPO,
    stderr: "inherit",
    stdout: "ignore",
  });
  if (build.exitCode !== 0) throw new Error("npm run build failed");
  const times: number[] = [];
  let idleRssMb = 0;
  for (let i = 0; i < runs; i++) {
    const dir = tempDir("outboxd-bench-cold-");
    const port = await freePort();
    const started = performance.now();
    const proc = Bun.spawn({
      cmd: [out, "serve"],
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        PORT: String(port),
        OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
        OUTBOXD_ADMIN_TOKEN: "bench-cold-start-token",
        OUTBOXD_LOG_LEVEL: "error",
      },
      stdout: "ignore",
      stderr: "ignore",
    });
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - started > 30_000) throw new Error("the executable did not become ready");
      await Bun.sleep(2);
    }
    times.push(performance.now() - started);
    if (i === runs - 1) {
      await Bun.sleep(2000);
      idleRssMb = rssMb(proc.pid);
    }
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
  const binaryMb = Math.round(Bun.file(out).size / 1024 / 1024);
  rmSync(out, { force: true });
  const row = {
    binaryMb,
    coldStartMs: rangeOf(times, 0),
    idleRssMb,
  };
  console.error(`cold start: ${row.coldStartMs.median} ms to /readyz, idle RSS ${idleRssMb} MB`);
  return row;
}
