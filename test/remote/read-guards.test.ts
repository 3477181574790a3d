// The remote write path's read guards (remote-writer.ts readGuards) run on a real libSQL server
// (sqld on 127.0.0.1, through outboxd's own batcher): a guard passes while the
// read still answers what it answered, and fails (SQLITE_CONSTRAINT, write_guards' CHECK) as soon
// as any row differs in any column, one is missing, one more came, or a NULL became a value. An
// `all` read of many rows is checked as a set, so its guard statements run the read once each, not
// once per row (a completion's guard of 64 deliveries used to re-read them 64 times).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import type { BatchStatement, HranaBatcher } from "../../src/db/hrana-batch.ts";
import { hranaBatcher } from "../../src/db/hrana-batch.ts";
import type { Statement } from "../../src/db/op.ts";
import { readGuards } from "../../src/db/remote-writer.ts";
import { tempDir } from "../helpers/server.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

let server: Sqld;
let batcher: HranaBatcher;

const READ: Statement = {
  kind: "all",
  sql: "SELECT id, owner, tries, score, note FROM items WHERE kind = :kind ORDER BY id",
  args: { kind: "k" },
};
/** More rows than one guard statement checks, so that the last rows are in a second one. */
const ROWS = 300;

beforeAll(async () => {
  server = await startSqld();
  batcher = hranaBatcher(server.url, undefined) as HranaBatcher;
  await batcher.batch(
    [
      {
        sql: "CREATE TABLE write_guards (held INTEGER NOT NULL, CONSTRAINT write_guard_failed CHECK (held = 1))",
        args: {},
      },
      {
        sql: "CREATE TABLE items (id TEXT PRIMARY KEY, kind TEXT, owner TEXT, tries INTEGER, score REAL, note TEXT)",
        args: {},
      },
    ],
    "write",
  );
});

afterAll(async () => {
  await server?.stop();
});

beforeEach(async () => {
  const rows: BatchStatement[] = Array.from({ length: ROWS }, (_, i) => ({
    sql: "INSERT INTO items (id, kind, owner, tries, score, note) VALUES (:id, 'k', :owner, :tries, :score, NULL)",
    // An integral REAL (2.0) comes back as the number 2: the guard must still match it.
    args: {
      id: `i${String(i).padStart(4, "0")}`,
      owner: i % 3 === 0 ? null : `o${i}`,
      tries: i,
      score: i % 2 ? 2 : 0.5,
    },
  }));
  await batcher.batch([{ sql: "DELETE FROM items", args: {} }, ...rows], "write");
});

/** What the read answers now. */
async function read(statement: Statement = READ) {
  const [answer] = await batcher.batch([{ sql: statement.sql, args: statement.args }], "read");
  return statement.kind === "get" ? answer?.rows[0] : answer?.rows;
}

/** Runs the guards in one write batch: null when they all pass, else the failed one's index. */
async function failedGuard(guards: BatchStatement[]): Promise<number | null> {
  try {
    await batcher.batch(guards, "write");
    return null;
  } catch (error) {
    const { code, statementIndex } = error as { code?: string; statementIndex?: number };
    expect(code).toBe("SQLITE_CONSTRAINT");
    return statementIndex ?? -1;
  }
}

async function change(sql: string, args: Record<string, string | number | null> = {}) {
  await batcher.batch([{ sql, args }], "write");
}

describe("the guards of an all read", () => {
  test("pass while the read answers the same rows, NULLs and integral reals included", async () => {
    const answer = await read();
    expect(answer).toHaveLength(ROWS);
    expect(await failedGuard(readGuards(READ, answer))).toBeNull();
  });

  test("run the read once per guard statement, whatever the number of rows", async () => {
    const guards = readGuards(READ, await read());
    // One count and ceil(300 / 256) row checks, each naming the read once.
    expect(guards).toHaveLength(3);
    for (const guard of guards) expect(guard.sql.split(READ.sql).length - 1).toBe(1);
  });

  for (const [what, sql] of [
    ["a text changed in the last rows", "UPDATE items SET owner = 'other' WHERE id = 'i0290'"],
    ["a NULL became a value", "UPDATE items SET owner = 'o0' WHERE id = 'i0000'"],
    ["a value became NULL", "UPDATE items SET owner = NULL WHERE id = 'i0001'"],
    ["an integer changed", "UPDATE items SET tries = tries + 1 WHERE id = 'i0100'"],
    ["a real changed", "UPDATE items SET score = 2.5 WHERE id = 'i0003'"],
    ["a row is missing", "DELETE FROM items WHERE id = 'i0150'"],
    ["a row more", "INSERT INTO items (id, kind, tries) VALUES ('i9999', 'k', 0)"],
    ["a row replaced by another (same count)", "UPDATE items SET id = 'i0150b' WHERE id = 'i0150'"],
  ] as const) {
    test(`fail once ${what}`, async () => {
      const guards = readGuards(READ, await read());
      await change(sql);
      expect(await failedGuard(guards)).not.toBeNull();
    });
  }
});

describe("the guard of a get read", () => {
  const GET: Statement = {
    kind: "get",
    sql: "SELECT id, owner FROM items WHERE id = :id",
    args: { id: "i0002" },
  };

  test("passes while the row is the same, fails once it changed or went", async () => {
    const guards = readGuards(GET, await read(GET));
    expect(await failedGuard(guards)).toBeNull();
    await change("UPDATE items SET owner = 'x' WHERE id = 'i0002'");
    expect(await failedGuard(guards)).not.toBeNull();
  });

  test("of no row passes while there is none, fails once there is", async () => {
    const none: Statement = { ...GET, args: { id: "nope" } };
    const guards = readGuards(none, await read(none));
    expect(await failedGuard(guards)).toBeNull();
    await change("INSERT INTO items (id, kind) VALUES ('nope', 'k')");
    expect(await failedGuard(guards)).not.toBeNull();
  });
});

test("@libsql/client on a file (JS numbers bound as reals) passes the same guards", async () => {
  const file = join(tempDir("outboxd-read-guards-file-"), "f.db");
  const client = createClient({ url: `file:${file}`, intMode: "number" });
  try {
    await client.batch(
      [
        "CREATE TABLE write_guards (held INTEGER NOT NULL, CHECK (held = 1))",
        "CREATE TABLE items (id TEXT PRIMARY KEY, kind TEXT, owner TEXT, tries INTEGER, score REAL, note TEXT)",
        "INSERT INTO items VALUES ('a', 'k', NULL, 3, 2.0, NULL), ('b', 'k', 'o', 4, 0.5, NULL)",
      ],
      "write",
    );
    const rows = (await client.execute({ sql: READ.sql, args: READ.args })).rows.map((row) => ({ ...row }));
    const guards = readGuards(READ, rows);
    await client.batch(guards, "write");
    await client.execute("UPDATE items SET tries = 5 WHERE id = 'b'");
    expect(client.batch(guards, "write")).rejects.toThrow(/CHECK constraint failed/);
  } finally {
    client.close();
  }
});
