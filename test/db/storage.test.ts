// The storage suite of the engine driver (every local file runs on it) on a real database file. An
// independent connection, opened by the test, observes the file from outside the driver.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { migrate, pendingMigrations } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { all, get, type Op, run } from "../../src/db/op.ts";
import { type Database as OutboxdDatabase, openDatabase } from "../../src/db/open.ts";
import { tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

const TABLES = ["attempts", "commits", "counters", "deliveries", "endpoints", "events", "records", "tokens"];

describe("engine driver", () => {
  let dir: string;
  let file: string;
  const opened: OutboxdDatabase[] = [];
  const observers: Database[] = [];

  /** Opens the file as outboxd does, from environment variables (plus `env`). */
  async function open(env: Record<string, string> = {}): Promise<OutboxdDatabase> {
    const db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: `file:${file}`, ...env }));
    expect(db.driver.name).toBe("engine");
    opened.push(db);
    return db;
  }

  /** A connection of the test's own, outside the driver under test. */
  function observer(timeoutMs = 5000): Database {
    const connection = new Database(file, { timeout: timeoutMs });
    observers.push(connection);
    return connection;
  }

  function count(table: string): number {
    return (observer().prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  }

  /** A table the tests write to, created through the driver. */
  async function createScratch(db: OutboxdDatabase): Promise<void> {
    await db.writer.write(run("CREATE TABLE scratch (k TEXT PRIMARY KEY, v INTEGER)"));
  }

  function* insert(k: string, v = 1): Op<number> {
    return yield* run("INSERT INTO scratch (k, v) VALUES (:k, :v)", { k, v });
  }

  beforeEach(() => {
    dir = tempDir("outboxd-storage-");
    file = join(dir, "storage.db");
  });

  afterEach(async () => {
    for (const connection of observers.splice(0)) connection.close();
    for (const db of opened.splice(0)) await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("migrations", () => {
    test("apply to an empty file and create every table", async () => {
      const db = await open();
      expect(await db.driver.read(pendingMigrations())).toEqual(migrations.map((m) => m.tag));
      const applied = await db.writer.write(migrate());
      expect(applied).toEqual(migrations.map((m) => m.tag));
      const tables = observer()
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .all() as { name: string }[];
      for (const table of TABLES) expect(tables.map((t) => t.name)).toContain(table);
      expect(await db.driver.read(pendingMigrations())).toEqual([]);
    });

    test("are idempotent: a second run, also from a new connection, applies nothing", async () => {
      const first = await open();
      await first.writer.write(migrate());
      await first.writer.write(run("INSERT INTO counters (name, value) VALUES ('kept', 7)"));
      expect(await first.writer.write(migrate())).toEqual([]);
      await first.close();

      const second = await open();
      expect(await second.writer.write(migrate())).toEqual([]);
      expect(await second.driver.read(pendingMigrations())).toEqual([]);
      // Nothing was re-created: the data written between the runs is still there.
      expect(await second.driver.read(get("SELECT value FROM counters WHERE name = 'kept'"))).toEqual({
        value: 7,
      });
      expect(count("__drizzle_migrations")).toBe(migrations.length);
    });
  });

  describe("transactions", () => {
    test("an operation that throws mid-transaction leaves nothing written", async () => {
      const db = await open();
      await createScratch(db);
      const failing = (function* () {
        yield* insert("a");
        yield* insert("b");
        // The operation can see its own writes…
        expect(yield* get("SELECT count(*) AS n FROM scratch")).toEqual({ n: 2 });
        throw new Error("boom after two writes");
      })();
      await expect(db.writer.write(failing)).rejects.toThrow("boom after two writes");
      // …and nobody else ever does.
      expect(count("scratch")).toBe(0);
      expect(await db.driver.read(get("SELECT count(*) AS n FROM scratch"))).toEqual({ n: 0 });
      // The writer is still usable afterwards.
      await db.writer.write(insert("c"));
      expect(count("scratch")).toBe(1);
    });

    test("a statement that fails mid-transaction (constraint) leaves nothing written", async () => {
      const db = await open();
      await createScratch(db);
      const failing = (function* () {
        yield* insert("x");
        yield* insert("y");
        yield* insert("x"); // primary key violation
      })();
      await expect(db.writer.write(failing)).rejects.toThrow(/UNIQUE|constraint/i);
      expect(count("scratch")).toBe(0);
    });

    test("the driver's own transaction rolls back when its body throws", async () => {
      const db = await open();
      await createScratch(db);
      await expect(
        db.driver.transaction(
          (function* () {
            yield* run("INSERT INTO scratch (k, v) VALUES ('t', 1)");
            throw new Error("body failed");
          })(),
        ),
      ).rejects.toThrow("body failed");
      expect(count("scratch")).toBe(0);
    });

    test("group commit: operations queued together share one transaction; one failing rolls back only itself", async () => {
      const db = await open();
      await createScratch(db);
      const outside = observer();
      const seenFromOutside: number[] = [];
      const seenInside: number[] = [];
      const op = (k: string, fail: boolean) =>
        (function* () {
          yield* insert(k);
          // Inside the shared transaction the earlier operations' writes are visible; from another
          // connection nothing of the batch is, because nothing has been committed yet.
          seenInside.push(((yield* get("SELECT count(*) AS n FROM scratch")) as { n: number }).n);
          seenFromOutside.push(
            (outside.prepare("SELECT count(*) AS n FROM scratch").get() as { n: number }).n,
          );
          if (fail) throw new Error(`op ${k} failed`);
          return k;
        })();
      // Queued in one turn of the event loop: the writer takes them as one batch.
      const results = await Promise.allSettled([
        db.writer.write(op("a", false)),
        db.writer.write(op("b", false)),
        db.writer.write(op("c", true)),
        db.writer.write(op("d", false)),
        db.writer.write(op("e", false)),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      expect(((results[2] as PromiseRejectedResult).reason as Error).message).toBe("op c failed");
      expect(seenFromOutside).toEqual([0, 0, 0, 0, 0]);
      // c's insert was visible to itself (3) and rolled back before d ran (d sees a, b, d).
      expect(seenInside).toEqual([1, 2, 3, 3, 4]);
      const keys = outside.prepare("SELECT k FROM scratch ORDER BY k").all() as { k: string }[];
      expect(keys.map((r) => r.k)).toEqual(["a", "b", "d", "e"]);
    });

    test("group commit of operations that can be made anew: one failing after its writes rolls back only itself, one failing before any write costs nothing", async () => {
      const db = await open();
      await createScratch(db);
      const runs = new Map<string, number>();
      const op = (k: string, fail: "no" | "after-write" | "before-write") =>
        function* () {
          runs.set(k, (runs.get(k) ?? 0) + 1);
          if (fail === "before-write") {
            yield* get("SELECT count(*) AS n FROM scratch");
            throw new Error(`op ${k} refused`);
          }
          yield* insert(k);
          if (fail === "after-write") throw new Error(`op ${k} failed`);
          return (yield* get<{ n: number }>("SELECT count(*) AS n FROM scratch"))?.n;
        };
      const results = await Promise.allSettled([
        db.writer.write(op("a", "no")),
        db.writer.write(op("b", "before-write")),
        db.writer.write(op("c", "no")),
        db.writer.write(op("d", "after-write")),
        db.writer.write(op("e", "no")),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "rejected",
        "fulfilled",
      ]);
      expect(((results[1] as PromiseRejectedResult).reason as Error).message).toBe("op b refused");
      expect(((results[3] as PromiseRejectedResult).reason as Error).message).toBe("op d failed");
      // Each operation sees the batch's earlier writes, never d's.
      expect(results.map((r) => (r.status === "fulfilled" ? r.value : null))).toEqual([1, null, 2, null, 3]);
      const keys = observer().prepare("SELECT k FROM scratch ORDER BY k").all() as { k: string }[];
      expect(keys.map((r) => r.k)).toEqual(["a", "c", "e"]);
      // Together in one batch: d's failure undid the batch, which ran again without it; b and d ran once.
      expect(Object.fromEntries(runs)).toEqual({ a: 2, b: 1, c: 2, d: 1, e: 1 });
    });

    test("group commit beside operations that cannot be made anew: those run after the others, each alone, and see their writes; the others still together", async () => {
      const db = await open();
      await createScratch(db);
      const runs = new Map<string, number>();
      const body = (k: string, fail: boolean) =>
        function* () {
          runs.set(k, (runs.get(k) ?? 0) + 1);
          yield* insert(k);
          if (fail) throw new Error(`op ${k} failed`);
          return (yield* get<{ n: number }>("SELECT count(*) AS n FROM scratch"))?.n;
        };
      const results = await Promise.allSettled([
        db.writer.write(body("a", false)),
        db.writer.write(body("x", false)()),
        db.writer.write(body("d", true)),
        db.writer.write(body("p", true)()),
        db.writer.write(body("e", false)),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "rejected",
        "rejected",
        "fulfilled",
      ]);
      expect(((results[2] as PromiseRejectedResult).reason as Error).message).toBe("op d failed");
      expect(((results[3] as PromiseRejectedResult).reason as Error).message).toBe("op p failed");
      const keys = observer().prepare("SELECT k FROM scratch ORDER BY k").all() as { k: string }[];
      expect(keys.map((r) => r.k)).toEqual(["a", "e", "x"]);
      // a, d, e together under one savepoint: d's failure after its write undid them, and a ran
      // again; then x and p (plain operations), once each, seeing a and e; p undone alone.
      expect(results.map((r) => (r.status === "fulfilled" ? r.value : null))).toEqual([1, 3, null, null, 2]);
      expect(Object.fromEntries(runs)).toEqual({ x: 1, p: 1, a: 2, d: 1, e: 1 });
    });

    test("group commit of operations that can be made anew: the last of the batch failing after its writes leaves nothing behind", async () => {
      const db = await open();
      await createScratch(db);
      const op = (k: string, fail: boolean) =>
        function* () {
          yield* insert(k);
          if (fail) throw new Error(`op ${k} failed`);
          return k;
        };
      // The batch's every operation has an outcome here, the failing one's last: still undone.
      const results = await Promise.allSettled([
        db.writer.write(op("a", false)),
        db.writer.write(op("b", false)),
        db.writer.write(op("z", true)),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
      const keys = observer().prepare("SELECT k FROM scratch ORDER BY k").all() as { k: string }[];
      expect(keys.map((r) => r.k)).toEqual(["a", "b"]);
    });

    test("a write's promise settles only after its COMMIT is visible to other connections", async () => {
      const db = await open();
      await createScratch(db);
      const outside = observer();
      const writes = ["p", "q", "r"].map((k) =>
        db.writer.write(insert(k)).then(() => {
          const row = outside.prepare("SELECT k FROM scratch WHERE k = ?").get(k);
          return row !== undefined;
        }),
      );
      expect(await Promise.all(writes)).toEqual([true, true, true]);
    });

    test("the write transaction is BEGIN IMMEDIATE: it holds the write lock before its first statement", async () => {
      const db = await open();
      await createScratch(db);
      const probe = observer(50);
      const tryToWrite = (): string => {
        try {
          probe.exec("BEGIN IMMEDIATE");
          probe.exec("ROLLBACK");
          return "acquired";
        } catch (error) {
          return (error as { code?: string }).code ?? String(error);
        }
      };
      // Outside any transaction the probe gets the lock, so the probe itself works.
      expect(tryToWrite()).toBe("acquired");
      // The driver's transaction, before its body has run a single statement.
      const inDriver = await db.driver.transaction(
        (function* () {
          const result = tryToWrite();
          yield* insert("in-driver");
          return result;
        })(),
      );
      expect(inDriver).toBe("SQLITE_BUSY");
      // Through the Writer: an operation whose first act (before any statement of its own) is the probe.
      const inWriter = await db.writer.write(
        (function* () {
          const result = tryToWrite();
          yield* insert("after-probe");
          return result;
        })(),
      );
      expect(inWriter).toBe("SQLITE_BUSY");
      expect(tryToWrite()).toBe("acquired");
    });
  });

  describe("PRAGMAs", () => {
    function* pragmas(): Op<{ journal: string; synchronous: number }> {
      const journal = (yield* get<{ journal_mode: string }>("PRAGMA journal_mode"))?.journal_mode ?? "";
      const synchronous = (yield* get<{ synchronous: number }>("PRAGMA synchronous"))?.synchronous ?? -1;
      return { journal: journal.toLowerCase(), synchronous: Number(synchronous) };
    }

    // FULL: every acknowledged write survives power loss: SQLite syncs the WAL inside COMMIT,
    // before any connection can see the commit (DESIGN §1.8).

    test("journal_mode=wal and synchronous=FULL on the writer and reader connections", async () => {
      const db = await open();
      await createScratch(db);
      // Several transactions first, so the connection checked is the one in use after them.
      for (const k of ["1", "2", "3"]) await db.writer.write(insert(k));
      expect(await db.writer.write(pragmas())).toEqual({ journal: "wal", synchronous: 2 });
      expect(await db.driver.read(pragmas())).toEqual({ journal: "wal", synchronous: 2 });
      await db.writer.write(insert("4"));
      expect(await db.writer.write(pragmas())).toEqual({ journal: "wal", synchronous: 2 });
      // WAL is a property of the file: a fresh connection sees it too.
      expect(observer().prepare("PRAGMA journal_mode").all()).toEqual([{ journal_mode: "wal" }]);
    });

    test("FULL: a lease or outcome transaction (durable: false) alone runs NORMAL, the next durable one FULL again", async () => {
      const db = await open();
      await createScratch(db);
      expect(await db.writer.write(pragmas(), { durable: false })).toEqual({
        journal: "wal",
        synchronous: 1,
      });
      expect(await db.writer.write(pragmas())).toEqual({ journal: "wal", synchronous: 2 });
      // A batch with one durable operation syncs as a durable one.
      const [relaxed, durable] = await Promise.all([
        db.writer.write(pragmas(), { durable: false }),
        db.writer.write(pragmas()),
      ]);
      expect(relaxed).toEqual({ journal: "wal", synchronous: 2 });
      expect(durable).toEqual({ journal: "wal", synchronous: 2 });
      await db.writer.write(insert("bookkeeping"), { durable: false });
      expect(count("scratch")).toBe(1);
    });

    test("OUTBOXD_SYNCHRONOUS=NORMAL relaxes synchronous to 1", async () => {
      const db = await open({ OUTBOXD_SYNCHRONOUS: "NORMAL" });
      await createScratch(db);
      await db.writer.write(insert("1"));
      expect(await db.writer.write(pragmas())).toEqual({ journal: "wal", synchronous: 1 });
      expect(await db.driver.read(pragmas())).toEqual({ journal: "wal", synchronous: 1 });
    });

    test("reads see committed data and run outside the write queue", async () => {
      const db = await open();
      await createScratch(db);
      await db.writer.write(insert("seen", 5));
      expect(await db.driver.read(all("SELECT k, v FROM scratch"))).toEqual([{ k: "seen", v: 5 }]);
    });
  });
});
