// The one rule for storage errors (src/db/storage-errors.ts): which are fatal, which is a full
// disk, read from the code as bun:sqlite (code + errno) and libsql (code + rawCode) report it.
// The processes that stop on a fatal one: test/drills/durability.test.ts.
import { expect, test } from "bun:test";
import { isFatalStorageError, isStorageFull, sqliteCode } from "../../src/db/storage-errors.ts";

const error = (fields: Record<string, unknown>) => Object.assign(new Error("x"), fields);

test("SQLITE_IOERR_* and SQLITE_CORRUPT* are fatal, by name or by number; nothing else is", () => {
  for (const fatal of [
    error({ code: "SQLITE_IOERR_FSYNC", errno: 1034 }),
    error({ code: "SQLITE_IOERR" }),
    error({ code: "SQLITE_IOERR_SHORT_READ", rawCode: 522 }),
    error({ code: "SQLITE_CORRUPT" }),
    error({ code: "SQLITE_CORRUPT_INDEX", rawCode: 779 }),
  ]) {
    expect(isFatalStorageError(fatal)).toBe(true);
  }
  for (const other of [
    error({ code: "SQLITE_BUSY", errno: 5 }),
    error({ code: "SQLITE_FULL", errno: 13 }),
    error({ code: "SQLITE_CONSTRAINT_UNIQUE", errno: 2067 }),
    error({ code: "SQLITE_NOTADB" }),
    error({ code: "ECONNRESET" }),
    new Error("plain"),
    null,
  ]) {
    expect(isFatalStorageError(other)).toBe(false);
  }
});

test("SQLITE_FULL is a full disk; the code is read only when it is SQLite's", () => {
  expect(isStorageFull(error({ code: "SQLITE_FULL", errno: 13 }))).toBe(true);
  expect(isStorageFull(error({ code: "SQLITE_FULL" }))).toBe(true);
  expect(isStorageFull(error({ code: "SQLITE_IOERR_FSYNC" }))).toBe(false);
  expect(sqliteCode(error({ code: "SQLITE_IOERR_FSYNC" }))).toBe("SQLITE_IOERR_FSYNC");
  expect(sqliteCode(error({ code: "ECONNRESET" }))).toBeUndefined();
});
