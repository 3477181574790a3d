// The engine driver binds `:name` parameters by position when it can read their order from the
// statement's text safely, and by name otherwise: the same rows either way.
import { expect, test } from "bun:test";
import { parameterOrder } from "../../src/db/parameters.ts";
import { Database } from "../helpers/sqlite.ts";

test("parameters in SQLite's order (first appearance), each once; nothing read where a ':' could be in a literal or comment", () => {
  expect(parameterOrder("INSERT INTO t (a, b, c) VALUES (:b, :a, :b || :c)")).toEqual(["b", "a", "c"]);
  expect(parameterOrder("SELECT 1")).toEqual([]);
  expect(parameterOrder("SELECT * FROM t WHERE a = :a AND b > (SELECT max(b) FROM u WHERE k = :k)")).toEqual([
    "a",
    "k",
  ]);
  expect(parameterOrder("SELECT :y -- :x")).toBeNull();
  expect(parameterOrder("SELECT :y /* :x */")).toBeNull();
  expect(parameterOrder("SELECT ?, :y")).toBeNull();
  expect(parameterOrder("SELECT $j, :y")).toBeNull();
  expect(parameterOrder("SELECT @j, :y")).toBeNull();
  expect(parameterOrder("SELECT [a:b] FROM t WHERE x = :y")).toBeNull();
});

test("a ':' or another parameter form inside a quoted string or identifier is stepped over", () => {
  expect(parameterOrder("SELECT ':x' || :y")).toEqual(["y"]);
  expect(parameterOrder("SELECT 'it''s :x' || :y, :z")).toEqual(["y", "z"]);
  expect(parameterOrder('SELECT "a:b", `c:d` FROM t WHERE x = :y')).toEqual(["y"]);
  expect(parameterOrder("SELECT json_extract(:j, '$.a'), '--', '?' || :k")).toEqual(["j", "k"]);
});

test("SQLite numbers named parameters by first appearance, as parameterOrder reads them", () => {
  const db = new Database(":memory:");
  const sql = "SELECT :b AS b, :a AS a, (SELECT :c) AS c, :b || :a AS ba";
  const order = parameterOrder(sql) as string[];
  const args: Record<string, string> = { a: "1", b: "2", c: "3" };
  const byName = db.prepare(sql).get(args) as Record<string, unknown>;
  const byPosition = db.prepare(sql).get(order.map((name) => args[name])) as Record<string, unknown>;
  expect(byPosition).toEqual(byName);
  expect(byName).toEqual({ b: "2", a: "1", c: "3", ba: "21" });
  // Quoted text with a ':' in it binds nothing: positions and names agree there too.
  const quoted = "SELECT ':a' AS lit, :b AS b, 'x'':c' AS lit2, :a AS a";
  const quotedOrder = parameterOrder(quoted) as string[];
  expect(quotedOrder).toEqual(["b", "a"]);
  expect(db.prepare(quoted).get(quotedOrder.map((name) => args[name]))).toEqual(db.prepare(quoted).get(args));
  db.close();
});
