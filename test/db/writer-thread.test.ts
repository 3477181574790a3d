// Named writes in both modes of OUTBOXD_WRITER_THREAD (db/writer-ops.ts, writer-thread.ts): the
// same writes, on a real database file each, answered the same way whether the engine driver's
// writer runs on this thread or on its own; then what only the writer thread has to keep (every
// write known there, durable before answered, raw operations refused, a death ends the process).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { get, run } from "../../src/db/op.ts";
import { type Database as OutboxdDatabase, openDatabase } from "../../src/db/open.ts";
import { definedWrites } from "../../src/db/writer-ops.ts";
import { EARLY, WriterThread } from "../../src/db/writer-thread.ts";
import { migrateWrite } from "../../src/ledger/writes.ts";
import { Problem } from "../../src/lib/problem.ts";
import { Database } from "../helpers/sqlite.ts";
import "../../src/app.ts";
import { startChild } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";
import {
  createScratchWrite,
  heldWrite,
  insertAgainWrite,
  insertWrite,
  plainInsertWrite,
  pragmasWrite,
  problemWrite,
  TEST_WRITES,
} from "../helpers/test-writes.ts";

/** The writes of every message posted to a writer thread (a list, or its JSON text), until restored. */
function watchPostedWrites() {
  const posted: (unknown[] | string)[] = [];
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, message: unknown, ...rest: unknown[]) {
    const sent = message as { kind?: string; writes?: unknown[] | string } | null;
    if (sent?.kind === "write" && sent.writes !== undefined) posted.push(sent.writes);
    return (post as (...args: unknown[]) => void).call(this, message, ...rest);
  } as Worker["postMessage"];
  return {
    posted,
    /** How many writes each message carried. */
    counts: () => posted.map((writes) => (typeof writes === "string" ? JSON.parse(writes) : writes).length),
    restore: () => {
      Worker.prototype.postMessage = post;
    },
  };
}

let dir: string;
let file: string;
const opened: OutboxdDatabase[] = [];
const observers: Database[] = [];

beforeEach(() => {
  dir = tempDir("outboxd-writer-thread-");
  file = join(dir, "writer.db");
});

afterEach(async () => {
  for (const connection of observers.splice(0)) connection.close();
  for (const db of opened.splice(0)) await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(mode: "main" | "worker", env: Record<string, string> = {}): Promise<OutboxdDatabase> {
  const db = await openDatabase({
    ...loadConfig({ OUTBOXD_DATABASE_URL: `file:${file}`, OUTBOXD_WRITER_THREAD: mode, ...env }),
    writerModules: [TEST_WRITES],
  });
  opened.push(db);
  return db;
}

/** A connection of the test's own, outside the database under test. */
function observer(): Database {
  const connection = new Database(file, { timeout: 5000 });
  observers.push(connection);
  return connection;
}

function keys(): string[] {
  return (observer().prepare("SELECT k FROM scratch ORDER BY k").all() as { k: string }[]).map((r) => r.k);
}

describe.each(["main", "worker"] as const)("writer on the %s thread", (mode) => {
  test("migrations apply once: a second run, also from a new process's database, applies nothing", async () => {
    const first = await open(mode);
    expect((await first.write(migrateWrite())).length).toBeGreaterThan(0);
    expect(await first.write(migrateWrite())).toEqual([]);
    await first.close();
    opened.splice(0);
    const second = await open(mode);
    expect(await second.write(migrateWrite())).toEqual([]);
  });

  test("a write that throws after its statements leaves nothing written; its error reaches the caller; the writer goes on", async () => {
    const db = await open(mode);
    await db.write(createScratchWrite());
    // Not expect(…).rejects: Bun waits for that promise in a loop of its own, which does not
    // take the writer thread's messages (the answer would never arrive).
    const error = await db.write(insertWrite(["a", "b"], "boom after two writes")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe("boom after two writes");
    expect(keys()).toEqual([]);
    expect(await db.write(insertWrite(["c"], null))).toBe(1);
    expect(keys()).toEqual(["c"]);
  });

  test("a constraint violation keeps SQLite's code", async () => {
    const db = await open(mode);
    await db.write(createScratchWrite());
    const error = await db.write(insertWrite(["x", "y", "x"], null)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as { code?: string }).code).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
    expect(keys()).toEqual([]);
  });

  test("a Problem thrown by a write reaches the caller intact: class, status, slug, pointers", async () => {
    const db = await open(mode);
    await db.write(createScratchWrite());
    const error = await db.write(problemWrite()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Problem);
    const problem = error as Problem;
    expect(problem.status).toBe(422);
    expect(problem.slug).toBe("validation");
    expect(problem.toJSON()).toMatchObject({
      status: 422,
      errors: [{ pointer: "/records/0/id", detail: "is refused by the test" }],
    });
    expect(keys()).toEqual([]);
  });

  test("writes queued together share one transaction; one failing after its writes undoes only its own", async () => {
    const db = await open(mode);
    await db.write(createScratchWrite());
    for (const make of [insertAgainWrite, insertWrite]) {
      const prefix = make === insertWrite ? "once-" : "again-";
      const before = keys().length;
      const results = await Promise.allSettled(
        ["a", "b", "c", "d", "e"].map((k) => db.write(make([prefix + k], k === "c" ? `${k} failed` : null))),
      );
      expect(results.map((r) => r.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      // Each saw the rows of the writes before it in the same transaction, never c's.
      expect(results.map((r) => (r.status === "fulfilled" ? (r.value as number) - before : null))).toEqual([
        1,
        2,
        null,
        3,
        4,
      ]);
    }
    expect(keys()).toEqual([
      "again-a",
      "again-b",
      "again-d",
      "again-e",
      "once-a",
      "once-b",
      "once-d",
      "once-e",
    ]);
  });

  test("a write is answered only once its COMMIT is visible to other connections", async () => {
    const db = await open(mode);
    await db.write(createScratchWrite());
    const outside = observer();
    const seen = await Promise.all(
      ["p", "q", "r"].map((k) =>
        db
          .write(insertWrite([k], null))
          .then(
            () =>
              (outside.prepare("SELECT k FROM scratch WHERE k = ?").get(k) as { k: string } | undefined)?.k,
          ),
      ),
    );
    expect(seen).toEqual(["p", "q", "r"]);
  });

  test("FULL: the writer connection commits with synchronous FULL in WAL mode", async () => {
    const db = await open(mode);
    await db.write(createScratchWrite());
    expect(await db.write(pragmasWrite())).toEqual({ journal: "wal", synchronous: 2 });
  });
});

describe("OUTBOXD_WRITER_THREAD", () => {
  test("unset: the writer thread with the engine driver; the main thread with the client driver, which writes only there", () => {
    const local = { OUTBOXD_DATABASE_URL: "file:./data/outboxd.db" };
    expect(loadConfig(local).writerThread).toBe("worker");
    expect(loadConfig({ ...local, OUTBOXD_DRIVER: "client" }).writerThread).toBe("main");
    expect(loadConfig({ OUTBOXD_DATABASE_URL: "libsql://db.example.com" }).writerThread).toBe("main");
    expect(loadConfig({ ...local, OUTBOXD_WRITER_THREAD: "main" }).writerThread).toBe("main");
    // Asked for explicitly, it is refused with the client driver: the setting says what it cannot do.
    expect(() => loadConfig({ ...local, OUTBOXD_DRIVER: "client", OUTBOXD_WRITER_THREAD: "worker" })).toThrow(
      "OUTBOXD_WRITER_THREAD=worker works only with OUTBOXD_DRIVER=engine",
    );
  });
});

describe("the writer thread", () => {
  test("knows every named write this thread defines", async () => {
    // This thread imported the whole application (src/app.ts) and the tests' writes.
    const thread = await WriterThread.start(
      {
        path: file,
        options: { synchronous: "FULL", busyTimeoutMs: 5000 },
        failpoints: [],
        modules: [TEST_WRITES],
      },
      (reason) => {
        throw new Error(`the writer thread died: ${reason}`);
      },
    );
    try {
      expect(thread.definedThere).toEqual(definedWrites());
      expect(definedWrites()).toContain("commit");
      expect(definedWrites()).toContain("dispatch.completeAndClaim");
    } finally {
      await thread.close();
    }
  });

  test("plain writes cross as JSON text, the others as structured clones, each answered as it would be on this thread", async () => {
    const db = await open("worker");
    await db.write(createScratchWrite());
    const watch = watchPostedWrites();
    try {
      const note = { label: "x", missing: undefined, nested: [1, 2] };
      // Queued in one turn: one message, all plain.
      const both = await Promise.all([
        db.write(plainInsertWrite(["p1"], note)),
        db.write(plainInsertWrite(["p2"], note)),
      ]);
      // With a write that is not plain: one message, cloned; the plain one answered the same.
      const mixed = await Promise.all([
        db.write(plainInsertWrite(["p3"], note)),
        db.write(insertWrite(["s1"], null)),
      ]);
      expect(watch.posted.map((writes) => typeof writes)).toEqual(["string", "object"]);
      // (toEqual: an undefined value and a missing key are alike, as plain writes must take them.)
      const expected = (rows: number) => ({ rows, note: { label: "x", nested: [1, 2] } });
      expect(both).toEqual([expected(1), expected(2)]);
      expect(mixed).toEqual([expected(3), 4]);
    } finally {
      watch.restore();
    }
  });

  test("writes queued while earlier ones are unanswered wait here and go over together, once those are answered", async () => {
    const db = await open("worker");
    await db.write(createScratchWrite());
    const watch = watchPostedWrites();
    // Shared memory crosses as itself: the held write waits on the writer thread until set here.
    const gate = new Int32Array(new SharedArrayBuffer(4));
    try {
      const held = db.write(heldWrite(gate));
      const deadline = Date.now() + 10_000;
      while (watch.posted.length === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      const later = [db.write(insertWrite(["b"], null))];
      await new Promise((r) => setImmediate(r));
      later.push(db.write(insertWrite(["c"], null)));
      await new Promise((r) => setImmediate(r));
      expect(watch.counts()).toEqual([1]);
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      expect(await held).toBe(0);
      expect(await Promise.all(later)).toEqual([1, 2]);
      expect(watch.counts()).toEqual([1, 2]);
    } finally {
      watch.restore();
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
    }
  });

  test("a second message goes once EARLY writes are queued while one is unanswered, a third waits for an answer", async () => {
    const db = await open("worker");
    await db.write(createScratchWrite());
    const watch = watchPostedWrites();
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const batch = (prefix: string) =>
      Array.from({ length: EARLY }, (_, i) => db.write(insertWrite([`${prefix}${i}`], null)));
    try {
      const held = db.write(heldWrite(gate));
      const deadline = Date.now() + 10_000;
      while (watch.posted.length === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      // EARLY writes in one turn: they go at once, while the held write is unanswered.
      const second = batch("s");
      expect(watch.counts()).toEqual([1, EARLY]);
      // Two messages in flight: the next writes wait here, whatever their number.
      const third = batch("t");
      third.push(db.write(insertWrite(["last"], null)));
      await new Promise((r) => setImmediate(r));
      expect(watch.counts()).toEqual([1, EARLY]);
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      expect(await held).toBe(0);
      expect(await Promise.all(second)).toHaveLength(EARLY);
      expect(await Promise.all(third)).toHaveLength(EARLY + 1);
      expect(watch.counts()).toEqual([1, EARLY, EARLY + 1]);
      expect(keys()).toHaveLength(2 * EARLY + 1);
    } finally {
      watch.restore();
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
    }
  });

  test("refuses operations that are not named writes: this thread has no writer connection", async () => {
    const db = await open("worker");
    await db.write(createScratchWrite());
    const error = await db.writer
      .write(run("INSERT INTO scratch (k, v) VALUES ('raw', 1)"))
      .catch((e: unknown) => e);
    expect(String(error)).toContain("OUTBOXD_WRITER_THREAD=worker");
    expect(await db.driver.read(get("SELECT count(*) AS n FROM scratch"))).toEqual({ n: 0 });
  });

  test("a writer thread that dies ends the process with a non-zero exit, its write unanswered", async () => {
    const child = startChild([process.execPath, "test/helpers/writer-thread-dies.ts", file], {});
    expect(await child.exited).toBe(1);
    expect(child.stderr()).toContain("written");
    expect(child.stderr()).toContain("the writer thread died");
    expect(child.stderr()).not.toContain("answered");
  });
});
