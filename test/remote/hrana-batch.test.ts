// outboxd's own Hrana batcher (src/db/hrana-batch.ts) against a stub server that records what it
// was sent: the URL and token it derives from OUTBOXD_DATABASE_URL, the steps it sends, and how a
// server's answers become row objects and errors (a failed statement names its index; a failed
// request does not). The round-trip suite runs it against a real libSQL server too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HranaBatchError, hranaBatcher, numberedParameters } from "../../src/db/hrana-batch.ts";

interface Seen {
  path: string;
  authorization: string | null;
  body: { baton: string | null; requests: { type: string; batch?: { steps: { stmt: unknown }[] } }[] };
}

let server: ReturnType<typeof Bun.serve>;
const seen: Seen[] = [];
let answer: (body: Seen["body"]) => Response = () => new Response("", { status: 500 });

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as Seen["body"];
      seen.push({
        path: new URL(request.url).pathname,
        authorization: request.headers.get("authorization"),
        body,
      });
      return answer(body);
    },
  });
});

afterAll(() => server.stop(true));

/** A pipeline answer whose batch steps all succeeded with `result`, but for `errors` by step. */
function batchAnswer(
  body: Seen["body"],
  result: unknown,
  errors: Record<number, { message: string; code: string }> = {},
  stream: { baton: string | null; base_url: string | null } = { baton: null, base_url: null },
) {
  const batch = body.requests.find((r) => r.type === "batch");
  const steps = batch?.batch?.steps.length ?? 0;
  const failedAt = Math.min(...Object.keys(errors).map(Number), steps);
  const results = body.requests.map((r) =>
    r.type === "batch"
      ? {
          type: "ok",
          response: {
            type: "batch",
            result: {
              step_results: Array.from({ length: steps }, (_, i) => (i < failedAt ? result : null)),
              step_errors: Array.from({ length: steps }, (_, i) => errors[i] ?? null),
            },
          },
        }
      : { type: "ok", response: { type: r.type } },
  );
  return Response.json({ ...stream, results });
}

describe("the Hrana batcher", () => {
  test("libsql:// with tls=0 and an authToken in the URL: POST /v2/pipeline over http with the token as a Bearer header", async () => {
    const batcher = hranaBatcher(`libsql://127.0.0.1:${server.port}?tls=0&authToken=t0ken`, undefined);
    answer = (body) =>
      batchAnswer(body, {
        cols: [{ name: "n" }, { name: "s" }],
        rows: [
          [
            { type: "integer", value: "7" },
            { type: "text", value: "x" },
          ],
        ],
        affected_row_count: 0,
      });
    seen.length = 0;
    const [rows] =
      (await batcher?.batch([{ sql: "SELECT :n AS n, :s AS s", args: { n: 7, s: "x" } }], "read")) ?? [];
    expect(rows?.rows).toEqual([{ n: 7, s: "x" }]);
    expect(seen[0]?.path).toBe("/v2/pipeline");
    expect(seen[0]?.authorization).toBe("Bearer t0ken");
    const steps = seen[0]?.body.requests.find((r) => r.type === "batch")?.batch?.steps ?? [];
    expect(steps.map((step) => (step.stmt as { sql?: string }).sql)).toEqual([
      "BEGIN TRANSACTION READONLY",
      "SELECT ?1 AS n, ?2 AS s",
      "COMMIT",
      "ROLLBACK",
    ]);
    // Arguments by position; integers travel as Hrana integers, strings as text.
    expect((steps[1]?.stmt as { args?: unknown } | undefined)?.args).toEqual([
      { type: "integer", value: "7" },
      { type: "text", value: "x" },
    ]);
  });

  test("a statement the server refused: its index in the batch given and the server's code (the batch rolled back)", async () => {
    const batcher = hranaBatcher(`http://127.0.0.1:${server.port}`, "tok");
    answer = (body) =>
      batchAnswer(
        body,
        { cols: [], rows: [], affected_row_count: 1 },
        { 2: { message: "CHECK constraint failed", code: "SQLITE_CONSTRAINT" } },
      );
    const statements = [0, 1, 2].map((i) => ({ sql: "INSERT INTO t (v) VALUES (:v)", args: { v: i } }));
    const error = await batcher?.batch(statements, "write").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HranaBatchError);
    // Step 2 of the pipeline is the second statement (step 0 is BEGIN IMMEDIATE).
    expect(error).toMatchObject({ statementIndex: 1, code: "SQLITE_CONSTRAINT" });
    // The repeated SQL text went once, stored ahead of the batch.
    const requests = seen.at(-1)?.body.requests ?? [];
    expect(requests.map((r) => r.type)).toEqual(["store_sql", "batch", "close"]);
  });

  test("a request the server failed: no statement index (its outcome is for the caller to decide)", async () => {
    const batcher = hranaBatcher(`http://127.0.0.1:${server.port}`, undefined);
    answer = () => new Response("overloaded", { status: 503 });
    const error = await batcher
      ?.batch([{ sql: "INSERT INTO t (v) VALUES (1)", args: {} }], "write")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HranaBatchError);
    expect((error as HranaBatchError).statementIndex).toBeUndefined();
  });

  test("a transaction's first request carries BEGIN; its later requests go where the server's base_url says (Turso routes a stream so); COMMIT's batch closes the stream", async () => {
    const batcher = hranaBatcher(`http://127.0.0.1:${server.port}`, undefined);
    const elsewhere = `http://127.0.0.1:${server.port}/elsewhere/`;
    answer = (body) =>
      batchAnswer(
        body,
        { cols: [{ name: "seq" }], rows: [[{ type: "integer", value: "1" }]], affected_row_count: 0 },
        {},
        { baton: body.requests.some((r) => r.type === "close") ? null : "b1", base_url: elsewhere },
      );
    seen.length = 0;
    const tx = await batcher?.transaction("write");
    const [read] = (await tx?.batch([{ sql: "SELECT 1 AS seq", args: {} }])) ?? [];
    expect(read?.rows).toEqual([{ seq: 1 }]);
    await tx?.batch([
      { sql: "INSERT INTO t (v) VALUES (1)", args: {} },
      { sql: "COMMIT", args: {} },
    ]);
    expect(tx?.closed).toBe(true);
    expect(seen.map((s) => [s.path, s.body.baton])).toEqual([
      ["/v2/pipeline", null],
      ["/elsewhere/v2/pipeline", "b1"],
    ]);
    const sqls = (at: number) =>
      seen[at]?.body.requests[0]?.batch?.steps.map((step) => (step.stmt as { sql: string }).sql);
    expect(sqls(0)).toEqual(["BEGIN IMMEDIATE", "SELECT 1 AS seq"]);
    expect(seen[1]?.body.requests.map((r) => r.type)).toEqual(["batch", "close"]);
    expect(sqls(1)).toEqual(["INSERT INTO t (v) VALUES (1)", "COMMIT"]);
  });

  test("a transaction whose BEGIN the server refused: no statement index, the stream closed (nothing to roll back)", async () => {
    const batcher = hranaBatcher(`http://127.0.0.1:${server.port}`, undefined);
    answer = (body) =>
      batchAnswer(
        body,
        { cols: [], rows: [], affected_row_count: 0 },
        { 0: { message: "database is locked", code: "SQLITE_BUSY" } },
        { baton: body.requests.some((r) => r.type === "close") ? null : "b2", base_url: null },
      );
    seen.length = 0;
    const tx = await batcher?.transaction("write");
    const error = await tx?.batch([{ sql: "SELECT 1 AS seq", args: {} }]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "SQLITE_BUSY", statementIndex: undefined });
    expect(tx?.closed).toBe(true);
    await tx?.rollback();
    // The request with BEGIN, then the stream's close (sent without waiting): no ROLLBACK sent.
    for (let waited = 0; seen.length < 2 && waited < 2000; waited += 5) await Bun.sleep(5);
    expect(seen.map((s) => s.body.requests.map((r) => r.type))).toEqual([["batch"], ["close"]]);
  });

  test("named parameters go as numbered ones: the same name, the same number; quotes and comments untouched", () => {
    expect(
      numberedParameters(
        "SELECT ':not' AS \"a:b\", [c:d], `e:f` -- :nor\n/* :this */ FROM t WHERE x = :x AND y = :yy OR z = :x",
      ),
    ).toEqual({
      sql: "SELECT ':not' AS \"a:b\", [c:d], `e:f` -- :nor\n/* :this */ FROM t WHERE x = ?1 AND y = ?2 OR z = ?1",
      names: ["x", "yy"],
    });
    expect(numberedParameters("SELECT 'it''s :here', :a")).toEqual({
      sql: "SELECT 'it''s :here', ?1",
      names: ["a"],
    });
    expect(numberedParameters("SELECT 1")).toEqual({ sql: "SELECT 1", names: [] });
    // Other forms of parameters (and an unterminated quote) are left to be sent by name.
    for (const sql of ["SELECT ?", "SELECT @a", "SELECT $a", "SELECT :a, ?2", "SELECT 'open :a"])
      expect(numberedParameters(sql)).toBeNull();
  });

  test("a statement whose parameters cannot be numbered goes with named arguments", async () => {
    const batcher = hranaBatcher(`http://127.0.0.1:${server.port}`, undefined);
    answer = (body) => batchAnswer(body, { cols: [], rows: [], affected_row_count: 1 });
    seen.length = 0;
    await batcher?.batch([{ sql: "INSERT INTO t (v) VALUES (@v)", args: { v: 1 } }], "write");
    const steps = seen[0]?.body.requests.find((r) => r.type === "batch")?.batch?.steps ?? [];
    expect(steps[1]?.stmt).toEqual({
      sql: "INSERT INTO t (v) VALUES (@v)",
      named_args: [{ name: "v", value: { type: "integer", value: "1" } }],
    });
  });

  test("local files and WebSocket URLs are left to @libsql/client", () => {
    expect(hranaBatcher("file:/tmp/x.db", undefined)).toBeNull();
    expect(hranaBatcher("wss://db.example.com", undefined)).toBeNull();
  });
});
