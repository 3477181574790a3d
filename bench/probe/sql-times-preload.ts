// Preloaded into an outboxd process by bench/probe/drain.ts (SQL_TIMES=file): the main thread's
// CPU time (process.threadCpuUsage, so other processes' load does not count) in each SQL statement
// of the `libsql` engine (prepared statements' run/get/all, and exec), by statement text, written
// to SQL_TIMES as the process exits: [sql, calls, ms][].
import { writeFileSync } from "node:fs";
import Database from "libsql";

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
const probe = new Database(":memory:");
const Statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, Fn>;
const Db = Database.prototype as unknown as Record<string, Fn>;
const prepare = Db.prepare as Fn;
Db.prepare = function (sql, ...rest) {
  const statement = prepare.call(this, sql, ...rest) as object;
  sqlOf.set(statement, String(sql).replace(/\s+/g, " ").slice(0, 160));
  return statement;
};
const exec = Db.exec as Fn;
Db.exec = function (sql) {
  const t0 = cpu();
  try {
    return exec.call(this, sql);
  } finally {
    note(String(sql).slice(0, 60), cpu() - t0);
  }
};
// Not iterate: `all` runs through it.
for (const name of ["run", "get", "all"]) {
  const original = Statement[name] as Fn;
  Statement[name] = function (...args) {
    const t0 = cpu();
    try {
      return original.apply(this, args);
    } finally {
      note(sqlOf.get(this as object) ?? "?", cpu() - t0);
    }
  };
}
process.on("exit", () => {
  writeFileSync(
    process.env.SQL_TIMES as string,
    JSON.stringify([...times].map(([sql, [n, ms]]) => [sql, n, ms])),
  );
});
