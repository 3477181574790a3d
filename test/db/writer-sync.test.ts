// The Writer on the engine driver with synchronous FULL (a real database file): durable writes
// queued while a transaction's WAL sync is still running wait for it and then commit together, in
// one transaction just before the next sync; bookkeeping (not durable) is never held back. The
// sync of the first transaction is held open by the test (a slow disk) by a gate on its promise.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Driver } from "../../src/db/driver.ts";
import { openEngineDriver } from "../../src/db/engine-driver.ts";
import { get, type Op, run } from "../../src/db/op.ts";
import { Writer } from "../../src/db/writer.ts";
import { waitFor } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/server.ts";

let dir: string;
let driver: Driver;

beforeEach(() => {
  dir = tempDir("outboxd-writer-sync-");
  driver = openEngineDriver(join(dir, "writer.db"), { synchronous: "FULL", busyTimeoutMs: 5000 });
});

afterEach(async () => {
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The engine driver, counting its transactions; the next one's durability waits for `open()`. */
function gated(inner: Driver) {
  let release: () => void = () => {};
  let gate: Promise<void> | null = null;
  const state = { transactions: 0 };
  const wrapped: Driver = {
    ...inner,
    name: inner.name,
    pipelined: true,
    read: (op) => inner.read(op),
    async transaction(op, options) {
      state.transactions += 1;
      const held = gate;
      gate = null;
      const value = await inner.transaction(op, options);
      if (held) await held;
      return value;
    },
  };
  return {
    driver: wrapped,
    state,
    /** The next transaction's promise settles only after open(). */
    holdNext() {
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    open: () => release(),
  };
}

function* insert(k: string): Op<number> {
  return yield* run("INSERT INTO scratch (k) VALUES (:k)", { k });
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A writer on the gated driver whose first durable write has committed and waits for its sync. */
async function firstWriteSyncing() {
  const g = gated(driver);
  const writer = new Writer(g.driver);
  await writer.write(run("CREATE TABLE scratch (k TEXT PRIMARY KEY)"));
  g.holdNext();
  const first = writer.write(insert("first"));
  await waitFor("the first transaction to commit", () => g.state.transactions === 2);
  return { g, writer, first };
}

test("durable writes queued during a running sync commit together in one transaction once it ends", async () => {
  const { g, writer, first } = await firstWriteSyncing();
  // Requests arriving one by one while the sync runs: each in a turn of the event loop of its own.
  const later: Promise<number>[] = [];
  for (let i = 0; i < 5; i++) {
    later.push(writer.write(insert(`later-${i}`)));
    await nextTurn();
  }
  expect(g.state.transactions).toBe(2);
  g.open();
  expect(await first).toBe(1);
  expect(await Promise.all(later)).toEqual([1, 1, 1, 1, 1]);
  // One transaction for the five, not one each.
  expect(g.state.transactions).toBe(3);
  const rows = await driver.read(get<{ n: number }>("SELECT count(*) AS n FROM scratch"));
  expect(rows?.n).toBe(6);
});

test("bookkeeping (not durable) is not held behind a running sync", async () => {
  const { g, writer, first } = await firstWriteSyncing();
  const bookkeeping = writer.write(insert("bookkeeping"), { durable: false });
  await waitFor(
    "the bookkeeping transaction to commit while the sync runs",
    () => g.state.transactions === 3,
  );
  g.open();
  expect(await first).toBe(1);
  expect(await bookkeeping).toBe(1);
});
