// Two machines on one database, as DESIGN §8 runs them: two `outboxd serve` and two
// `outboxd dispatch` processes share one database while a killer loop SIGKILLs and restarts them
// at random and the receiver fails at random. The crash soak's ledger (scripts/soak.ts) must hold:
// nothing lost, nothing phantom, order per aggregate, sequences 1..n with none repeated or skipped,
// one version per commit, and `outboxd verify` passes. Twice: on the database file itself (the
// engine driver in each process), and on a real libSQL server (sqld on 127.0.0.1,
// test/helpers/sqld.ts), where the group batches go through the remote write path and outboxd's
// own Hrana batcher (remote-writer.ts, hrana-batch.ts), taking the write lock in turns.
import { expect, test } from "bun:test";
import { spawn } from "bun";
import { keepForCi } from "../helpers/ci-log.ts";
import { REPO } from "../helpers/process.ts";

const SOAK = ["--servers", "2", "--dispatchers", "2", "--duration", "20", "--rate", "100"];

for (const [name, extra] of [
  ["on the database file", []],
  ["on a real libSQL server", ["--sqld"]],
] as const) {
  test(`two serve and two dispatch processes with a killer loop, ${name}: the soak's ledger holds`, async () => {
    const soak = spawn({
      cmd: [process.execPath, "scripts/soak.ts", ...SOAK, "--aggregates", "20", ...extra],
      cwd: REPO,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(soak.stdout).text(),
      new Response(soak.stderr).text(),
      soak.exited,
    ]);
    if (code !== 0) keepForCi(`soak ${name}`, `exit ${code}\n${out.slice(-4000)}\n${err.slice(-4000)}`);
    expect(out).toContain('"problems": 0');
    expect(out).toContain("soak: 1 passed, 0 failed");
    expect(code).toBe(0);
    // Longer than the soak's own bounds (20 s of load, up to 120 s of drain, start-up): a slow
    // drain then fails with the soak's verdict and output instead of a bare timeout.
  }, 200_000);
}
