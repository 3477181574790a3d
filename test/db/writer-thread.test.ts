// The engine driver's writer on its thread (src/db/writer-thread.ts), as `serve` runs it: every
// named write is known there, the connection there commits with synchronous=FULL, a Problem
// thrown there reaches the caller as the same Problem with nothing of its write kept, and the
// reads on this thread see what was committed there.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { all } from "../../src/db/op.ts";
import { type Database, openDatabase } from "../../src/db/open.ts";
import { migrateWrite } from "../../src/ledger/writes.ts";
import { Problem } from "../../src/lib/problem.ts";
import { tempDir } from "../helpers/server.ts";
import { pragmasWrite, problemWrite, sqlWrite, TEST_WRITES } from "../helpers/test-writes.ts";

describe("the writer thread", () => {
  let dir = "";
  let db: Database;
  beforeAll(async () => {
    dir = tempDir();
    db = await openDatabase(
      {
        databaseUrl: `file:${join(dir, "outboxd.db")}`,
        databaseAuthToken: undefined,
        synchronous: "FULL",
        busyTimeoutMs: 5_000,
        writerModules: [TEST_WRITES],
      },
      "thread",
    );
    await db.write(migrateWrite());
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("src/writes.ts imports every module that defines named writes (the writer thread knows them all)", () => {
    const root = join(import.meta.dir, "../../src");
    const registry = readFileSync(join(root, "writes.ts"), "utf8");
    const defining = [...new Glob("**/*.ts").scanSync(root)].filter(
      (file) =>
        !file.startsWith("db/") && /\bdefine(Borrowing)?Write\(/.test(readFileSync(join(root, file), "utf8")),
    );
    expect(defining.length).toBeGreaterThan(10);
    for (const file of defining)
      expect({ file, imported: registry.includes(`"./${file}"`) }).toEqual({ file, imported: true });
  });

  test("commits with synchronous=FULL in WAL mode", async () => {
    expect(await db.write(pragmasWrite())).toEqual({ journal: "wal", synchronous: 2 });
  });

  test("a Problem thrown there is the same Problem here, and its write is undone", async () => {
    await db.write(sqlWrite("CREATE TABLE scratch (k TEXT PRIMARY KEY)", {}));
    const error = await db.write(problemWrite()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Problem);
    expect((error as Problem).toJSON()).toMatchObject({
      status: 422,
      errors: [{ pointer: "/records/0/id", detail: "is refused by the test" }],
    });
    const rows = await db.driver.read(all("SELECT k FROM scratch"));
    expect(rows).toEqual([]);
  });

  test("this thread's reads see what the writer thread committed; its own Writer refuses", async () => {
    await db.write(sqlWrite("CREATE TABLE known (k TEXT)", {}));
    await db.write(sqlWrite("INSERT INTO known (k) VALUES (:k)", { k: "seen" }));
    const rows = await db.driver.read(all("SELECT k FROM known"));
    expect(rows).toEqual([{ k: "seen" }]);
    await expect(db.writer.write(all("SELECT 1"))).rejects.toThrow(/writer thread/);
  });
});
