// The records routes (DESIGN §3 Commits and records): PUT with If-Match / If-None-Match, GET
// with ETag, tombstones, and the list ordered by id with cursor pagination.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventsOf, expectProblem, expectStatus, RFC3339_UTC, UUID } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("records", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
  });
  afterAll(async () => {
    await server.stop();
  });

  const putRecord = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    server.request("PUT", `/v1/records/${path}`, body, headers);
  const getRecord = (path: string) => server.request("GET", `/v1/records/${path}`);

  describe("PUT /v1/records/{collection}/{id}", () => {
    test("creates (201) then updates (200), with ETag and the record in the answer", async () => {
      const created = await putRecord("orders/o-1", { data: { total: 10 } });
      const body = expectStatus(created, 201);
      expect(created.headers.get("etag")).toBe('"1"');
      expect(body).toMatchObject({
        collection: "orders",
        id: "o-1",
        version: 1,
        data: { total: 10 },
        events: [],
      });
      expect(body.commitId).toMatch(/^cmt_/);
      expect(body.createdAt).toMatch(RFC3339_UTC);
      expect(body.updatedAt).toMatch(RFC3339_UTC);

      const updated = await putRecord("orders/o-1", { data: { total: 12 } });
      expect(expectStatus(updated, 200)).toMatchObject({
        version: 2,
        data: { total: 12 },
        createdAt: body.createdAt,
      });
      expect(updated.headers.get("etag")).toBe('"2"');
    });

    test('If-Match: "<version>" must match: 200 on a match, 412 with currentVersion otherwise', async () => {
      expectStatus(await putRecord("orders/o-2", { data: { n: 1 } }), 201);
      const matched = await putRecord("orders/o-2", { data: { n: 2 } }, { "if-match": '"1"' });
      expectStatus(matched, 200);
      expect(matched.headers.get("etag")).toBe('"2"');

      const stale = expectProblem(
        await putRecord("orders/o-2", { data: { n: 3 } }, { "if-match": '"1"' }),
        412,
      );
      expect(stale.currentVersion).toBe(2);
      expect(stale.type).toEndWith("precondition-failed");
      const missing = expectProblem(
        await putRecord("orders/never", { data: { n: 1 } }, { "if-match": '"1"' }),
        412,
      );
      expect(missing).toHaveProperty("currentVersion", null);
      expect(expectStatus(await getRecord("orders/o-2"), 200)).toMatchObject({ version: 2, data: { n: 2 } });
      expectProblem(await getRecord("orders/never"), 404);
    });

    test("If-None-Match: * creates (201) only what never existed, else 412 with currentVersion", async () => {
      const created = await putRecord("orders/o-3", { data: { n: 1 } }, { "if-none-match": "*" });
      expectStatus(created, 201);
      expect(created.headers.get("etag")).toBe('"1"');
      const again = expectProblem(
        await putRecord("orders/o-3", { data: { n: 2 } }, { "if-none-match": "*" }),
        412,
      );
      expect(again.currentVersion).toBe(1);
      expect(expectStatus(await getRecord("orders/o-3"), 200).data).toEqual({ n: 1 });
    });

    test("bad precondition headers are 422 naming the header", async () => {
      expectProblem(await putRecord("orders/h", { data: {} }, { "if-match": "abc" }), 422, "header:If-Match");
      expectProblem(await putRecord("orders/h", { data: {} }, { "if-match": '"0"' }), 422, "header:If-Match");
      expectProblem(
        await putRecord("orders/h", { data: {} }, { "if-none-match": '"1"' }),
        422,
        "header:If-None-Match",
      );
      expectProblem(
        await putRecord("orders/h", { data: {} }, { "if-match": '"1"', "if-none-match": "*" }),
        422,
        "header:If-Match",
      );
      expectProblem(await getRecord("orders/h"), 404);
    });

    test("events default to the record's aggregate and are answered as in a commit", async () => {
      const response = await putRecord("orders/o-4", {
        data: { state: "paid" },
        events: [
          { type: "order.paid", payload: { orderId: "o-4" } },
          { type: "order.audit", aggregate: "audit/1" },
        ],
      });
      const body = expectStatus(response, 201);
      expect(body.events).toHaveLength(2);
      expect(body.events[0]).toMatchObject({
        type: "order.paid",
        aggregate: "orders/o-4",
        sequence: 1,
        deliveries: [],
      });
      expect(body.events[0].id).toMatch(UUID);
      expect(body.events[1]).toMatchObject({ aggregate: "audit/1", sequence: 1 });
      expect((await eventsOf(server, "orders/o-4")).map((e) => e.payload)).toEqual([{ orderId: "o-4" }]);
    });

    test("a failed precondition stores neither the record nor its events", async () => {
      expectStatus(await putRecord("orders/o-5", { data: { n: 1 } }), 201);
      expectProblem(
        await putRecord(
          "orders/o-5",
          { data: { n: 2 }, events: [{ type: "order.x" }] },
          { "if-match": '"9"' },
        ),
        412,
      );
      expect(await eventsOf(server, "orders/o-5")).toEqual([]);
    });

    test("re-creating a deleted record is 201, with If-Match naming the tombstone's version", async () => {
      expectStatus(await putRecord("orders/o-6", { data: { n: 1 } }), 201);
      expectStatus(
        await server.request("POST", "/v1/commits", {
          records: [{ collection: "orders", id: "o-6", expectedVersion: 1, delete: true }],
        }),
        201,
      );
      expectProblem(await putRecord("orders/o-6", { data: { n: 2 } }, { "if-none-match": "*" }), 412);
      const recreated = await putRecord("orders/o-6", { data: { n: 2 } }, { "if-match": '"2"' });
      expect(expectStatus(recreated, 201)).toMatchObject({ version: 3, data: { n: 2 } });
      expect(recreated.headers.get("etag")).toBe('"3"');
    });

    test("with an Idempotency-Key a retry answers the same status, ETag and body", async () => {
      const key = `put-${crypto.randomUUID()}`;
      const first = await putRecord("orders/o-7", { data: { n: 1 } }, { "idempotency-key": key });
      expectStatus(first, 201);
      const retry = await putRecord("orders/o-7", { data: { n: 1 } }, { "idempotency-key": key });
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("etag")).toBe('"1"');
      expect(retry.body).toEqual(first.body);
      expect(expectStatus(await getRecord("orders/o-7"), 200).version).toBe(1);
    });

    test("data is stored exactly, keys like constructor, prototype and __proto__ included", async () => {
      const json =
        '{"data": {"constructor": "Bob", "prototype": 1, "__proto__": {"x": 1}, "nested": {"constructor": 2}}}';
      expectStatus(await putRecord("odd/keys", json), 201);
      const body = await (
        await fetch(`${server.url}/v1/records/odd/keys`, {
          headers: { authorization: `Bearer ${server.token}` },
        })
      ).text();
      expect(body).toContain(
        '"data":{"constructor":"Bob","prototype":1,"__proto__":{"x":1},"nested":{"constructor":2}}',
      );
      const viaCommit = expectStatus(
        await server.request(
          "POST",
          "/v1/commits",
          '{"records": [{"collection": "odd", "id": "c", "data": {"constructor": "x"}}]}',
        ),
        201,
      );
      expect(viaCommit.records[0].version).toBe(1);
      expect(expectStatus(await getRecord("odd/c"), 200).data.constructor).toBe("x");
    });

    test("the body is strict: data is required and must be an object, unknown fields are refused", async () => {
      expectProblem(await putRecord("orders/b", {}), 422, "/data");
      expectProblem(await putRecord("orders/b", { data: [1, 2] }), 422, "/data");
      expectProblem(await putRecord("orders/b", { data: {}, version: 3 }), 422, "/version");
      expectProblem(await getRecord("orders/b"), 404);
    });
  });

  describe("GET /v1/records/{collection}/{id}", () => {
    test("answers the record with its ETag", async () => {
      expectStatus(await putRecord("items/i-1", { data: { name: "lamp" } }), 201);
      expectStatus(await putRecord("items/i-1", { data: { name: "lamp", price: 3 } }), 200);
      const response = await getRecord("items/i-1");
      const body = expectStatus(response, 200);
      expect(response.headers.get("etag")).toBe('"2"');
      expect(Object.keys(body).sort()).toEqual([
        "collection",
        "createdAt",
        "data",
        "id",
        "updatedAt",
        "version",
      ]);
      expect(body).toMatchObject({
        collection: "items",
        id: "i-1",
        version: 2,
        data: { name: "lamp", price: 3 },
      });
      expect(body.createdAt).toMatch(RFC3339_UTC);
      expect(body.updatedAt).toMatch(RFC3339_UTC);
    });

    test("a deleted record is 404 with currentVersion; one that never existed has null", async () => {
      expectStatus(await putRecord("items/i-2", { data: {} }), 201);
      expectStatus(
        await server.request("POST", "/v1/commits", {
          records: [{ collection: "items", id: "i-2", delete: true }],
        }),
        201,
      );
      expect(expectProblem(await getRecord("items/i-2"), 404).currentVersion).toBe(2);
      expect(expectProblem(await getRecord("items/nope"), 404)).toHaveProperty("currentVersion", null);
    });

    test("invalid collection or id characters, and over-long names, are 422", async () => {
      expectProblem(await getRecord("items/bad!id"), 422, "path:id");
      expectProblem(await getRecord("it%20ems/ok"), 422, "path:collection");
      expectProblem(await getRecord(`items/${"x".repeat(129)}`), 422, "path:id");
      expectStatus(await putRecord(`items/${"x".repeat(128)}`, { data: {} }), 201);
      expectProblem(await putRecord("items/sl%2Fash", { data: {} }), 422, "path:id");
      expectProblem(await putRecord("it$ems/a", { data: {} }), 422, "path:collection");
      expectProblem(await server.request("GET", "/v1/records/bad*coll"), 422, "path:collection");
    });
  });

  describe("GET /v1/records/{collection}", () => {
    let lister: TestServer;
    const ids = ["a-1", "a-2", "b", "B", "c:9", "c.1", "d_2", "e-5", "z"];
    beforeAll(async () => {
      lister = await startServer({}, { dispatch: false });
      // Written out of order, plus one deleted record and one in another collection.
      for (const id of [...ids].reverse()) {
        expectStatus(await lister.request("PUT", `/v1/records/list/${id}`, { data: { id } }), 201);
      }
      expectStatus(await lister.request("PUT", "/v1/records/list/gone", { data: {} }), 201);
      expectStatus(
        await lister.request("POST", "/v1/commits", {
          records: [{ collection: "list", id: "gone", delete: true }],
        }),
        201,
      );
      expectStatus(await lister.request("PUT", "/v1/records/other/a-0", { data: {} }), 201);
    });
    afterAll(async () => {
      await lister.stop();
    });

    test("lists the live records of the collection ordered by id", async () => {
      const body = expectStatus(await lister.request("GET", "/v1/records/list"), 200);
      expect(body.data.map((r: { id: string }) => r.id)).toEqual([...ids].sort());
      expect(body.next).toBeNull();
      expect(body.data[0]).toMatchObject({ collection: "list", version: 1 });
    });

    test("pages with limit and after, following next until it is null", async () => {
      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const query: string = `limit=2${after === null ? "" : `&after=${encodeURIComponent(after)}`}`;
        const body = expectStatus(await lister.request("GET", `/v1/records/list?${query}`), 200);
        expect(body.data.length).toBeLessThanOrEqual(2);
        seen.push(...body.data.map((r: { id: string }) => r.id));
        after = body.next;
        if (after !== null) expect(typeof after).toBe("string");
        pages += 1;
      } while (after !== null && pages < 20);
      expect(seen).toEqual([...ids].sort());
      expect(pages).toBe(Math.ceil(ids.length / 2));
    });

    test("the default page is 100 records", async () => {
      const many = Array.from({ length: 100 }, (_, i) => ({
        collection: "many",
        id: `m${String(i).padStart(3, "0")}`,
        data: {},
      }));
      expectStatus(await lister.request("POST", "/v1/commits", { records: many }), 201);
      expectStatus(await lister.request("PUT", "/v1/records/many/m100", { data: {} }), 201);
      const first = expectStatus(await lister.request("GET", "/v1/records/many"), 200);
      expect(first.data).toHaveLength(100);
      expect(first.next).toBe("m099");
      const second = expectStatus(await lister.request("GET", `/v1/records/many?after=${first.next}`), 200);
      expect(second).toMatchObject({ next: null });
      expect(second.data.map((r: { id: string }) => r.id)).toEqual(["m100"]);
    });

    test("an empty collection is an empty page", async () => {
      expect(expectStatus(await lister.request("GET", "/v1/records/empty"), 200)).toEqual({
        data: [],
        next: null,
      });
    });

    test("limit outside 1..500 or not a number is 422", async () => {
      expectProblem(await lister.request("GET", "/v1/records/list?limit=501"), 422, "/limit");
      expectProblem(await lister.request("GET", "/v1/records/list?limit=0"), 422, "/limit");
      expectProblem(await lister.request("GET", "/v1/records/list?limit=ten"), 422, "/limit");
      expectStatus(await lister.request("GET", "/v1/records/list?limit=500"), 200);
    });
  });
});
