// Preloaded into an outboxd process by bench/probe/drain.ts (SQL_TIMES=file): the main thread's
// CPU time (process.threadCpuUsage, so other processes' load does not count) in each SQL statement
// of the process's SQLite (src/db/sqlite.ts: bun:sqlite under Bun; prepared statements'
// run/get/all, and exec), by statement text, written to SQL_TIMES as the process exits: [sql, calls, ms][].
import { writeFileSync } from "node:fs";
import { processSqlite } from "../../src/db/sqlite.ts";
import { BunStatement } from "../../src/db/sqlite-bun.ts";

type Fn = (this: unknown, ...args: unknown[]) => unknown;
const times = new Map<string, [calls: number, ms: number]>();
const sqlOf = new WeakMap<object, string>();
const cpu = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};
const note = (sql: string, ms: number) => {
  const t = times.get(sql) ?? [0, 0];
  t[0] += 1;
  t[1] += ms;
  times.set(sql, t);
};
// bun:sqlite's statements switch their own methods per call shape: time them through outboxd's
// wrapper (src/db/sqlite-bun.ts) instead, whose statements carry their text.
const bun = processSqlite() === "bun:sqlite";
const Database = (bun ? require("bun:sqlite").Database : require("libsql")) as { prototype: object };
const Db = Database.prototype as Record<string, Fn>;
let Statement: Record<string, Fn>;
if (bun) {
  Statement = BunStatement.prototype as unknown as Record<string, Fn>;
} else {
  Statement = Object.getPrototypeOf(
    (Db.prepare as Fn).call(
      new (Database as unknown as new (path: string) => object)(":memory:"),
      "SELECT 1",
    ),
  ) as Record<string, Fn>;
  const prepare = Db.prepare as Fn;
  Db.prepare = function (sql, ...rest) {
    const statement = prepare.call(this, sql, ...rest) as object;
    sqlOf.set(statement, String(sql));
    return statement;
  };
}
const textOf = (statement: object) =>
  (bun ? (statement as BunStatement).sql : (sqlOf.get(statement) ?? "?")).replace(/\s+/g, " ").slice(0, 160);
// bun:sqlite's exec is its run (src/db/sqlite-bun.ts calls run).
for (const name of bun ? ["run", "exec"] : ["exec"]) {
  const exec = Db[name] as Fn;
  Db[name] = function (sql, ...rest) {
    const t0 = cpu();
    try {
      return exec.call(this, sql, ...rest);
    } finally {
      note(String(sql).slice(0, 60), cpu() - t0);
    }
  };
}
// Not iterate: `all` runs through it.
for (const name of ["run", "get", "all"]) {
  const original = Statement[name] as Fn;
  Statement[name] = function (...args) {
    const t0 = cpu();
    try {
      return original.apply(this, args);
    } finally {
      note(textOf(this as object), cpu() - t0);
    }
  };
}
process.on("exit", () => {
  writeFileSync(
    process.env.SQL_TIMES as string,
    JSON.stringify([...times].map(([sql, [n, ms]]) => [sql, n, ms])),
  );
});
