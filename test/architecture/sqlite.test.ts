// One copy of SQLite per file and process (src/db/sqlite.ts): every in-process connection to a
// database file opens through src/db/sqlite-open.ts (tests: test/helpers/sqlite.ts), which follows
// the process's rule and refuses a file held here through the other library. A module that
// imported `libsql` or `bun:sqlite` itself could open a file beside an in-process server through
// another copy: only the modules listed here may, each for the reason given.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "../..");

const ALLOWED: Record<string, string> = {
  "src/db/sqlite-bun.ts": "the bun:sqlite side of openSqlite",
  "src/db/sqlite-libsql.ts": "the libsql side of openSqlite",
  "test/receiver/sqlite-store.ts": "a receiver's own inbox database (its own file), as a receiver writes it",
  "test/receiver/inbox-worker.ts": "a receiver's own inbox database (its own file)",
  "test/receiver/verify.test.ts": "a receiver's own inbox database (its own file)",
  "test/db/rows.test.ts": "libsql's own rows as the reference, on a database in memory",
  "test/db/sqlite-parity.test.ts": "both libraries side by side, each on its own file",
  "bench/probe/sql-times-preload.ts": "times the process's own library (it opens nothing)",
  "bench/probe/drain-sql.ts": "opens the file only once every in-process connection is closed",
};

const IMPORT = /(?:from\s+|import\(\s*|require\(\s*)["'](?:libsql|bun:sqlite)["']/;

test("only the listed modules load libsql or bun:sqlite themselves", () => {
  const offenders: string[] = [];
  for (const folder of ["src", "test", "bench", "scripts"]) {
    for (const path of new Glob(`${folder}/**/*.ts`).scanSync(ROOT)) {
      if (path in ALLOWED) continue;
      if (IMPORT.test(readFileSync(join(ROOT, path), "utf8"))) offenders.push(path);
    }
  }
  expect(offenders).toEqual([]);
});
