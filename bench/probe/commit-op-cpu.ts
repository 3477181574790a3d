// Issue 12, session 9: what the write of a commit costs alone — what the writer thread runs per
// commit, without HTTP, validation or the crossing to it: commitOp (one record created, one event,
// no endpoint: the commit benchmark's) through a Writer on the engine driver, on this thread, FULL,
// in groups of 64 (all queued at once, so each group is one transaction), after WARMUP (32,768)
// commits. Per block of 4,096 commits: this thread's CPU per commit (JavaScript and SQLite; the
// WAL's fdatasync runs off it). Prints the median.
//   bun bench/probe/commit-op-cpu.ts [blocks=8]
// With ROOT_B, the same probe from another checkout, each in a process of its own, alternated
// A B, B A, … for `pairs` pairs; prints both medians, the median per-pair ratio B/A and every pair.
//   ROOT_B=/path/to/other/checkout bun bench/probe/commit-op-cpu.ts [pairs=6]
// OUTBOXD_WRITER_THREAD=worker: the same commits as named writes to the writer thread (db.write,
// as the commit service queues them); then the CPU per commit is the writer thread's (from
// /proc/self/task), crossing included, and the main thread's beside it.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alternated, median, probeChild } from "../lib.ts";

const root = process.env.ROOT ?? join(import.meta.dir, "../..");
const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
const onWorker = process.env.OUTBOXD_WRITER_THREAD === "worker";

async function probe(blocks: number): Promise<{ us: number; main: number }> {
  const { openDatabase } = await import(join(root, "src/db/open.ts"));
  const { migrate } = await import(join(root, "src/db/migrate.ts"));
  const { commitOp } = await import(join(root, "src/commit/commit-op.ts"));
  const { commitWrite } = await import(join(root, "src/commit/writes.ts"));
  const dir = mkdtempSync(join(tmpdir(), "outboxd-commit-op-cpu-"));
  const open = (writerThread: "main" | "worker") =>
    openDatabase({
      databaseUrl: `file:${join(dir, "op.db")}`,
      databaseAuthToken: undefined,
      driver: "engine",
      synchronous: "FULL",
      busyTimeoutMs: 5000,
      writerThread,
    });
  // Migrated first on this thread (a named write cannot carry the migration to the writer thread).
  const setup = await open("main");
  await setup.writer.write(migrate());
  await setup.close();
  const db = await open(onWorker ? "worker" : "main");
  let next = 0;
  const input = () => {
    const now = Date.now();
    const id = `o-${next++}`;
    const data = '{"status":"paid","total":1250}';
    const payload = `{"orderId":"${id}","total":1250}`;
    return {
      by: { tokenId: "tok_probe", tokenName: "probe" },
      records: [
        {
          collection: "orders",
          id,
          expectedVersion: undefined,
          data,
          // What normalize.ts gives (this tree: the digest; before session 9: the flag).
          dataCanonical: true,
          dataDigest: sha256(data),
        },
      ],
      events: [
        {
          id: undefined,
          type: "order.paid",
          aggregate: `orders/${id}`,
          payload,
          payloadCanonical: true,
          payloadDigest: sha256(payload),
          deliverAfter: null,
          deliverBy: now + 86_400_000,
          endpoints: undefined,
        },
      ],
      idempotency: undefined,
      traceparent: undefined,
      conflictStatus: 409,
      maxDeliveries: 10_000,
      announceReads: false,
      now,
    };
  };
  const block = async (count: number) => {
    const t0 = process.threadCpuUsage();
    const w0 = writerThreadMs();
    for (let done = 0; done < count; done += 64) {
      await Promise.all(
        Array.from({ length: 64 }, () => {
          const commit = input();
          return onWorker ? db.write(commitWrite(commit)) : db.writer.write(() => commitOp(commit));
        }),
      );
    }
    const t = process.threadCpuUsage(t0);
    const main = (t.user + t.system) / count;
    return onWorker ? { us: ((writerThreadMs() - w0) * 1000) / count, main } : { us: main, main };
  };
  const used: number[] = [];
  const mainUsed: number[] = [];
  try {
    await block(Number(process.env.WARMUP ?? 32_768));
    for (let i = 0; i < blocks; i++) {
      const { us, main } = await block(4096);
      used.push(us);
      mainUsed.push(main);
    }
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { us: median(used), main: median(mainUsed) };
}

/** ms on a CPU so far of this process's writer thread (named "Worker"; the JIT's are not). */
function writerThreadMs(): number {
  let ms = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== "Worker") continue;
      ms += Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
    } catch {
      // the thread ended since the listing
    }
  }
  return ms;
}

async function child(at: string): Promise<number> {
  return (await probeChild(import.meta.path, ["8"], { ROOT: at, ROOT_B: undefined })).usPerCommit as number;
}

if (process.env.ROOT_B) {
  const pairs = Number(process.argv[2] ?? 6);
  const rootB = process.env.ROOT_B;
  const [a, b] = await alternated(
    pairs,
    () => child(root),
    () => child(rootB),
  );
  console.log(
    JSON.stringify({
      a: root,
      b: process.env.ROOT_B,
      usA: +median(a).toFixed(1),
      usB: +median(b).toFixed(1),
      ratioBtoA: +median(b.map((x, i) => x / (a[i] as number))).toFixed(3),
      pairs: a.map((x, i) => [+x.toFixed(1), +(b[i] as number).toFixed(1)]),
    }),
  );
} else {
  const { us, main } = await probe(Number(process.argv[2] ?? 8));
  console.log(JSON.stringify({ root, usPerCommit: +us.toFixed(1), mainThreadUsPerCommit: +main.toFixed(1) }));
}
