// WalSync's two ways of syncing a WAL (wal-sync.ts): on the pool, at most one running and one
// waiting (the main thread's), or blocking the thread that asks (the writer thread's). Either way a
// sync has finished when the promise resolves, and a failed sync rejects it.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WalSync } from "../../src/db/wal-sync.ts";
import { tempDir } from "../helpers/server.ts";

let dir: string;

beforeEach(() => {
  dir = tempDir("outboxd-wal-sync-");
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

test("blocking: the sync has finished when afterCommit returns; settled() asks for none", async () => {
  const path = join(dir, "db-wal");
  writeFileSync(path, "frames");
  const wal = new WalSync(path, true);
  const synced = wal.afterCommit();
  expect([wal.syncs, wal.synced]).toEqual([1, 1]);
  await synced;
  await wal.settled();
  expect([wal.syncs, wal.synced]).toEqual([1, 1]);
  await wal.close();
});

test("on the pool: a sync asked for while one runs waits for the next, which covers both", async () => {
  const path = join(dir, "db-wal");
  writeFileSync(path, "frames");
  const wal = new WalSync(path, false);
  const first = wal.afterCommit();
  const second = wal.afterCommit();
  const third = wal.afterCommit();
  expect(wal.synced).toBe(0);
  await Promise.all([first, second, third]);
  expect([wal.syncs, wal.synced]).toEqual([2, 2]);
  await wal.close();
});

test("either way, a sync that fails rejects: the commits it covered are not acknowledged", async () => {
  for (const blocking of [true, false]) {
    const wal = new WalSync(join(dir, "missing", "db-wal"), blocking);
    const error = await wal.afterCommit().catch((e) => e);
    expect(error).toBeInstanceOf(Error);
    expect(wal.synced).toBe(0);
    await wal.close();
  }
});
