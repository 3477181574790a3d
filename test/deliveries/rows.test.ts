// Rows as a VALUES list (src/deliveries/rows.ts): the same statement bound by position (the
// local engine) and by name (every other driver), padded to a few counts, on a real database
// through outboxd's own engine driver (whichever copy of SQLite the process uses).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createOutboxd, type Outboxd } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import type { Op, Row, Statement } from "../../src/db/op.ts";
import { chunks, MAX_ROWS, paddedCount, rowsStatement } from "../../src/deliveries/rows.ts";
import { tempDir } from "../helpers/server.ts";

describe("rows as a VALUES list", () => {
  let outboxd: Outboxd;
  let dir = "";
  beforeAll(async () => {
    dir = tempDir();
    outboxd = await createOutboxd(
      loadConfig({
        OUTBOXD_DATABASE_URL: `file:${join(dir, "x.db")}`,
        OUTBOXD_ADMIN_TOKEN: "rows-test-admin-token",
        OUTBOXD_LOG_LEVEL: "error",
      }),
      { dispatch: false },
    );
  });
  afterAll(async () => {
    await outboxd.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const answer = (statement: Statement) =>
    outboxd.db.driver.read(
      (function* (): Op<Row[]> {
        return (yield statement) as Row[];
      })(),
    );

  test("padded counts: exact up to 8, then multiples of 8; never fewer rows; lists of at most MAX_ROWS", () => {
    expect([1, 8, 9, 16, 17, 63, 64].map(paddedCount)).toEqual([1, 8, 16, 16, 24, 64, 64]);
    const counts = new Set<number>();
    for (let n = 1; n <= MAX_ROWS; n++) {
      expect(paddedCount(n)).toBeGreaterThanOrEqual(n);
      expect(paddedCount(n) - n).toBeLessThan(8);
      counts.add(paddedCount(n));
    }
    expect(counts.size).toBeLessThanOrEqual(15);
    expect(chunks(Array.from({ length: MAX_ROWS * 2 + 1 }, (_, i) => i)).map((c) => c.length)).toEqual([
      MAX_ROWS,
      MAX_ROWS,
      1,
    ]);
    expect(chunks([])).toEqual([]);
  });

  test("by position and by name the statement answers the same; the rest's own arguments follow the rows'", async () => {
    const rows = Array.from({ length: 19 }, (_, i) => [i, `id:${i}`, i % 3 === 0 ? null : i * 1.5]);
    // A quoted ':x' is no parameter; :min appears twice and is bound once.
    const rest = `SELECT b.k, b.id, b.v, ':x' AS quoted, :min AS low FROM b
      WHERE b.k IS NOT NULL AND b.k >= :min AND b.id != :skip ORDER BY b.k`;
    const statement = rowsStatement(
      "b",
      ["k", "id", "v"],
      rows,
      rest,
      { min: 2, skip: "id:4" },
      { kind: "all" },
    );
    expect(statement.values?.length).toBe(24 * 3 + 2);
    const byPosition = await answer(statement);
    // Without its positional values, as the client driver and the remote path bind it.
    const byName = await answer({ sql: statement.sql, kind: "all", args: statement.args });
    expect(byName).toEqual(byPosition);
    expect(byPosition.map((r) => (r as { k: number }).k)).toEqual(
      Array.from({ length: 17 }, (_, i) => i + 2).filter((k) => k !== 4),
    );
    expect(byPosition[0]).toMatchObject({ id: "id:2", v: 3, quoted: ":x", low: 2 });
  });

  test("an argument of the rest missing: no positional values (the driver binds by name, as for any statement)", () => {
    const statement = rowsStatement("b", ["k"], [[1]], "SELECT k FROM b WHERE k > :min", {}, { kind: "all" });
    expect(statement.values).toBeUndefined();
    expect(statement.args).toEqual({ r0: 1 });
  });
});
