// A Machine that dies during its turn of the write lock (racing Machines hold it from a group's
// reads to its batch with COMMIT: remote-writer.ts): nothing of its group was written (its writes
// travel with the COMMIT), and the server rolls the transaction back once it expires the stream,
// after which the other Machines' commits go on (docs/deploy.md, Network partitions). A real
// child process, really killed, against a real libSQL server (sqld on 127.0.0.1, which expires an
// idle stream after 10 s).
import { expect, test } from "bun:test";
import { spawn } from "bun";
import { type CommitOutcome, commitOp } from "../../src/commit/commit-op.ts";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db/migrate.ts";
import { openDatabase } from "../../src/db/open.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { commitInput } from "../helpers/commit-input.ts";
import { REPO } from "../helpers/process.ts";
import { startSqld } from "../helpers/sqld.ts";

test("a Machine killed during its turn of the write lock: once the server expires its stream, the other Machine's commits go on and the chain verifies", async () => {
  const server = await startSqld();
  const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: server.url }));
  try {
    await db.writer.write(migrate());
    await db.writer.write(() => commitOp(commitInput("before")));
    const other = spawn({
      cmd: [process.execPath, "test/remote/hold-turn.ts", server.url],
      cwd: REPO,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "inherit",
    });
    const { value } = await other.stdout.getReader().read();
    expect(new TextDecoder().decode(value)).toContain("holding");
    other.kill("SIGKILL");
    await other.exited;
    const outcomes: CommitOutcome[] = await Promise.all(
      ["a", "b", "c"].map((id) => db.writer.write(() => commitOp(commitInput(id)))),
    );
    expect(outcomes.map((o) => o.result.records[0]?.version)).toEqual([1, 1, 1]);
    expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true, commits: 4 });
  } finally {
    await db.close();
    await server.stop();
  }
}, 60_000);
