// The WAL's checkpoints run on a worker thread, not inside the writer's COMMIT on the event loop:
// with the writer's own threshold raised to a backstop, the database file still takes the WAL's
// pages once enough have gathered, and the WAL starts over instead of growing.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BACKSTOP_FRAMES, CHECKPOINT_FRAMES } from "../../src/db/checkpointer.ts";
import { localPragmas } from "../../src/db/driver.ts";
import { type EngineDriver, openEngineDriver } from "../../src/db/engine-driver.ts";
import { type Op, run } from "../../src/db/op.ts";

const PAGE = 4096;
let dir: string | null = null;
let driver: EngineDriver | null = null;

afterEach(async () => {
  await driver?.close();
  driver = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

async function until(what: string, condition: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/**
 * The wal-index header in the -shm file (https://www.sqlite.org/walformat.html): the WAL's last
 * valid frame (mxFrame, byte 16) and the frames already copied into the database (nBackfill, 96).
 */
function walIndex(path: string): { last: number; copied: number } {
  const header = readFileSync(`${path}-shm`).subarray(0, 100);
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  return { last: view.getUint32(16, true), copied: view.getUint32(96, true) };
}

/** Writes `pages` pages of new rows, 10 per transaction (each page one WAL frame at least). */
async function writePages(db: EngineDriver, pages: number, from: number): Promise<void> {
  for (let i = 0; i < pages / 10; i++) {
    await db.transaction(
      (function* (): Op<void> {
        yield* run("INSERT INTO filler (n, pad) VALUES (:n, :pad)", {
          n: from + i,
          pad: "x".repeat(10 * PAGE),
        });
      })(),
    );
  }
}

test("the worker's threshold is the writer's own (localPragmas), and the backstop is above it", () => {
  expect(localPragmas({ synchronous: "FULL", busyTimeoutMs: 1 })).toContain(
    `PRAGMA wal_autocheckpoint = ${CHECKPOINT_FRAMES}`,
  );
  expect(BACKSTOP_FRAMES).toBeGreaterThan(CHECKPOINT_FRAMES);
});

test("past the threshold the worker copies the WAL into the database file; the writer's backstop was never reached", async () => {
  dir = mkdtempSync(join(tmpdir(), "outboxd-checkpoints-"));
  const path = join(dir, "outboxd.db");
  const db = openEngineDriver(path, { synchronous: "FULL", busyTimeoutMs: 5000 });
  driver = db;
  await db.transaction(run("CREATE TABLE filler (n integer PRIMARY KEY, pad text)"));
  await until("the checkpoint worker to start", () => db.backgroundCheckpoints().working);
  const before = statSync(path).size;
  // More than the threshold, far less than the backstop: only the worker can have checkpointed.
  const pages = CHECKPOINT_FRAMES + 2_000;
  expect(pages).toBeLessThan(BACKSTOP_FRAMES);
  await writePages(db, pages, 0);
  await until("a checkpoint by the worker", () => db.backgroundCheckpoints().checkpoints > 0);
  // Frames rewrite some pages (the table's last leaf, the header page): fewer pages than frames.
  await until(
    "the pages in the database file",
    () => statSync(path).size >= before + (CHECKPOINT_FRAMES / 2) * PAGE,
  );
  // The WAL then starts over instead of growing: either it already did (a writer transaction
  // began while the worker had copied every frame), or the worker goes on copying what is left
  // until it has, and the writer's next transaction starts it over. (Waiting for that state, not
  // for a size: how far a loaded machine's worker lags behind a busy writer varies.)
  await until("the WAL to start over, or the worker to copy every frame", () => {
    const index = walIndex(path);
    return index.last < CHECKPOINT_FRAMES || index.copied === index.last;
  });
  await writePages(db, 10, pages);
  expect(walIndex(path).last).toBeLessThan(CHECKPOINT_FRAMES);
  expect(db.backgroundCheckpoints().working).toBe(true);
});

test("closing the driver ends the worker and closes its connection (the directory can go at once)", async () => {
  dir = mkdtempSync(join(tmpdir(), "outboxd-checkpoints-"));
  const path = join(dir, "outboxd.db");
  const db = openEngineDriver(path, { synchronous: "NORMAL", busyTimeoutMs: 5000 });
  await until("the checkpoint worker to start", () => db.backgroundCheckpoints().working);
  await db.close();
  expect(db.backgroundCheckpoints().working).toBe(false);
});
