// The storage suite on a real libSQL server (sqld on 127.0.0.1, test/helpers/sqld.ts): what a
// remote database's writes promise, observed from a connection of the test's own.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { type Client, createClient } from "@libsql/client";
import { loadConfig } from "../../src/config.ts";
import { migrate, pendingMigrations } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { all, get, type Op, run } from "../../src/db/op.ts";
import { type Database, openDatabase } from "../../src/db/open.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

let sqld: Sqld;
let db: Database;
let observer: Client;

beforeAll(async () => {
  sqld = await startSqld();
  db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: sqld.url }));
  observer = createClient({ url: sqld.url, intMode: "number" });
});

afterAll(async () => {
  observer?.close();
  await db?.close();
  await sqld?.stop();
});

beforeEach(async () => {
  await db.writer.write(run("CREATE TABLE scratch (k TEXT PRIMARY KEY, v INTEGER)"));
});
afterEach(async () => {
  await observer.execute("DROP TABLE IF EXISTS scratch");
});

function* insert(k: string, v = 1): Op<number> {
  return yield* run("INSERT INTO scratch (k, v) VALUES (:k, :v)", { k, v });
}

async function keys(): Promise<string[]> {
  return (await observer.execute("SELECT k FROM scratch ORDER BY k")).rows.map((r) => String(r.k));
}

test("migrations apply to an empty database once; a second run applies nothing", async () => {
  expect(await db.driver.read(pendingMigrations())).toEqual(migrations.map((m) => m.tag));
  expect(await db.writer.write(migrate())).toEqual(migrations.map((m) => m.tag));
  expect(await db.writer.write(migrate())).toEqual([]);
  expect(await db.driver.read(pendingMigrations())).toEqual([]);
  const counted = await observer.execute("SELECT count(*) AS n FROM __drizzle_migrations");
  expect(counted.rows[0]?.n).toBe(migrations.length);
});

test("an operation that throws mid-transaction leaves nothing written; the writer goes on", async () => {
  const failing = (function* () {
    yield* insert("a");
    yield* insert("b");
    expect(yield* get("SELECT count(*) AS n FROM scratch")).toEqual({ n: 2 });
    throw new Error("boom after two writes");
  })();
  await expect(db.writer.write(failing)).rejects.toThrow("boom after two writes");
  expect(await keys()).toEqual([]);
  await db.writer.write(insert("c"));
  expect(await keys()).toEqual(["c"]);
});

test("a statement that fails mid-transaction (constraint) leaves nothing written", async () => {
  const failing = (function* () {
    yield* insert("x");
    yield* insert("y");
    yield* insert("x");
  })();
  await expect(db.writer.write(failing)).rejects.toThrow(/UNIQUE|constraint/i);
  expect(await keys()).toEqual([]);
});

test("the driver's own transaction rolls back when its body throws", async () => {
  await expect(
    db.driver.transaction(
      (function* () {
        yield* run("INSERT INTO scratch (k, v) VALUES ('t', 1)");
        throw new Error("body failed");
      })(),
    ),
  ).rejects.toThrow("body failed");
  expect(await keys()).toEqual([]);
});

test("group commit of operations that can be made anew: one failing after its writes rolls back only itself, one failing before any write costs nothing", async () => {
  const op = (k: string, fail: "no" | "after-write" | "before-write") =>
    function* () {
      if (fail === "before-write") {
        yield* get("SELECT count(*) AS n FROM scratch");
        throw new Error(`op ${k} refused`);
      }
      yield* insert(k);
      if (fail === "after-write") throw new Error(`op ${k} failed`);
      return k;
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
  expect(await keys()).toEqual(["a", "c", "e"]);
});

test("group commit beside operations that cannot be made anew: each is all or nothing", async () => {
  const body = (k: string, fail: boolean) =>
    function* () {
      yield* insert(k);
      if (fail) throw new Error(`op ${k} failed`);
      return k;
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
  expect(await keys()).toEqual(["a", "e", "x"]);
});

test("a write's promise settles only after its COMMIT is visible to other connections", async () => {
  const writes = ["p", "q", "r"].map((k) =>
    db.writer
      .write(() => insert(k))
      .then(async () => {
        const found = await observer.execute({ sql: "SELECT k FROM scratch WHERE k = ?", args: [k] });
        return found.rows.length === 1;
      }),
  );
  expect(await Promise.all(writes)).toEqual([true, true, true]);
});

test("reads see committed data", async () => {
  await db.writer.write(insert("seen", 5));
  expect(await db.driver.read(all("SELECT k, v FROM scratch"))).toEqual([{ k: "seen", v: 5 }]);
});
