// POST /v1/commits through real HTTP on a real SQLite file (DESIGN §1.1, §1.3, §3 Commits).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IDEMPOTENCY_TTL_MS } from "../../src/lib/idempotency.ts";
import { exec } from "../dispatch/harness.ts";
import {
  createEndpoint,
  eventsOf,
  expectProblem,
  expectStatus,
  RFC3339_UTC,
  totals,
  UUID,
} from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const HOUR = 3_600_000;

/** A commit of one record, unconditional unless `expectedVersion` is given. */
function put(collection: string, id: string, data: Record<string, unknown>, expectedVersion?: number) {
  return {
    records: [{ collection, id, data, ...(expectedVersion !== undefined ? { expectedVersion } : {}) }],
  };
}

describe("POST /v1/commits", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  const commit = (body: unknown, headers?: Record<string, string>) =>
    server.request("POST", "/v1/commits", body, headers);

  test("the DESIGN §3 example body is accepted verbatim and answered in the documented shape", async () => {
    const endpointId = await createEndpoint(server, ["return.*"]);
    for (let i = 0; i < 3; i++) expectStatus(await commit(put("returns", "r-123", { step: i })), 201);
    expectStatus(await commit(put("returns", "r-124", { step: 0 })), 201);

    const example = {
      records: [
        { collection: "returns", id: "r-123", expectedVersion: 3, data: { status: "approved" } },
        { collection: "returns", id: "r-124", expectedVersion: 1, delete: true },
      ],
      events: [
        {
          type: "return.approved",
          aggregate: "returns/r-123",
          payload: { returnId: "r-123", approvedBy: "u-9" },
          deliverWithin: "24h",
          deliverAfter: null,
          endpoints: null,
          id: null,
        },
      ],
    };
    const before = Date.now();
    const response = await commit(JSON.stringify(example));
    const after = Date.now();
    const body = expectStatus(response, 201);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(response.headers.get("idempotent-replayed")).toBeNull();

    expect(Object.keys(body)).toEqual(["commitId", "records", "events"]);
    expect(body.commitId).toMatch(/^cmt_[0-9a-z]+$/);
    expect(body.records).toEqual([
      { collection: "returns", id: "r-123", version: 4, deleted: false },
      { collection: "returns", id: "r-124", version: 2, deleted: true },
    ]);
    for (const record of body.records)
      expect(Object.keys(record)).toEqual(["collection", "id", "version", "deleted"]);
    expect(body.events).toHaveLength(1);
    const [event] = body.events;
    expect(Object.keys(event)).toEqual(["id", "type", "aggregate", "sequence", "deliverBy", "deliveries"]);
    expect(event.id).toMatch(UUID);
    expect(event.type).toBe("return.approved");
    expect(event.aggregate).toBe("returns/r-123");
    expect(event.sequence).toBe(1);
    expect(event.deliverBy).toMatch(RFC3339_UTC);
    const deliverBy = Date.parse(event.deliverBy);
    // A remote database's clock (DESIGN §8) is this machine's plus an offset measured to a few ms.
    const slack = server.outboxd.db.file ? 0 : 5;
    expect(deliverBy).toBeGreaterThanOrEqual(before + 24 * HOUR - slack);
    expect(deliverBy).toBeLessThanOrEqual(after + 24 * HOUR + slack);
    expect(event.deliveries).toHaveLength(1);
    expect(Object.keys(event.deliveries[0])).toEqual(["id", "endpointId"]);
    expect(event.deliveries[0].id).toMatch(/^dlv_[0-9a-z]+$/);
    expect(event.deliveries[0].endpointId).toBe(endpointId);

    // What was committed is what the read side shows.
    const record = expectStatus(await server.request("GET", "/v1/records/returns/r-123"), 200);
    expect(record).toMatchObject({
      collection: "returns",
      id: "r-123",
      version: 4,
      data: { status: "approved" },
    });
    expectProblem(await server.request("GET", "/v1/records/returns/r-124"), 404);
    const stored = expectStatus(await server.request("GET", `/v1/events/${event.id}`), 200);
    expect(stored).toMatchObject({
      id: event.id,
      type: "return.approved",
      aggregate: "returns/r-123",
      sequence: 1,
      payload: { returnId: "r-123", approvedBy: "u-9" },
      deliverAfter: null,
      deliverBy: event.deliverBy,
      commitId: body.commitId,
    });
    expect(stored.deliveries.map((d: { id: string }) => d.id)).toEqual([event.deliveries[0].id]);
  });

  test("per-aggregate sequences are 1, 2, 3 without gaps, and independent per aggregate", async () => {
    const sequences: number[] = [];
    for (let i = 0; i < 3; i++) {
      const body = expectStatus(
        await commit({ ...put("seq", "a", { i }), events: [{ type: "seq.changed", payload: { i } }] }),
        201,
      );
      expect(body.events[0].aggregate).toBe("seq/a");
      sequences.push(body.events[0].sequence);
    }
    expect(sequences).toEqual([1, 2, 3]);
    // Two events of one aggregate in one commit take consecutive numbers; another aggregate starts at 1.
    const body = expectStatus(
      await commit({
        events: [
          { type: "seq.x", aggregate: "seq/a" },
          { type: "seq.x", aggregate: "seq/b" },
          { type: "seq.y", aggregate: "seq/a" },
        ],
      }),
      201,
    );
    expect(body.events.map((e: { sequence: number }) => e.sequence)).toEqual([4, 1, 5]);
    expect((await eventsOf(server, "seq/a")).map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect((await eventsOf(server, "seq/b")).map((e) => e.sequence)).toEqual([1]);
    // Paged by sequence: limit 2 gives [1, 2], [3, 4], [5] and then no cursor.
    const pages: number[][] = [];
    let after: string | null = null;
    do {
      const query: string = `aggregate=seq/a&limit=2${after === null ? "" : `&after=${after}`}`;
      const page = expectStatus(await server.request("GET", `/v1/events?${query}`), 200);
      pages.push(page.data.map((e: { sequence: number }) => e.sequence));
      after = page.next;
    } while (after !== null && pages.length < 10);
    expect(pages).toEqual([[1, 2], [3, 4], [5]]);
  });

  describe("expectedVersion", () => {
    test("0 creates a record that never existed, and conflicts (409, currentVersion) once it exists", async () => {
      const created = expectStatus(await commit(put("ev", "zero", { a: 1 }, 0)), 201);
      expect(created.records[0]).toEqual({ collection: "ev", id: "zero", version: 1, deleted: false });
      const conflict = expectProblem(
        await commit(put("ev", "zero", { a: 2 }, 0)),
        409,
        "/records/0/expectedVersion",
      );
      expect(conflict.currentVersion).toBe(1);
      expect(conflict.type).toEndWith("version-conflict");
    });

    test("n must match the current version; a record that never existed has currentVersion null", async () => {
      expectStatus(await commit(put("ev", "n", { v: 1 })), 201);
      expectStatus(await commit(put("ev", "n", { v: 2 }, 1)), 201);
      const stale = expectProblem(await commit(put("ev", "n", { v: 3 }, 1)), 409);
      expect(stale.currentVersion).toBe(2);
      const ahead = expectProblem(await commit(put("ev", "n", { v: 3 }, 7)), 409);
      expect(ahead.currentVersion).toBe(2);
      const never = expectProblem(await commit(put("ev", "never", { v: 1 }, 3)), 409);
      expect(never).toHaveProperty("currentVersion", null);
      // The conflicts changed nothing.
      const record = expectStatus(await server.request("GET", "/v1/records/ev/n"), 200);
      expect(record).toMatchObject({ version: 2, data: { v: 2 } });
      expectProblem(await server.request("GET", "/v1/records/ev/never"), 404);
    });

    test("omitted is unconditional: every write bumps the version by one", async () => {
      const versions = [];
      for (let i = 0; i < 4; i++)
        versions.push(expectStatus(await commit(put("ev", "free", { i })), 201).records[0].version);
      expect(versions).toEqual([1, 2, 3, 4]);
      // null means absent: unconditional too.
      const body = { records: [{ collection: "ev", id: "free", expectedVersion: null, data: { i: 4 } }] };
      expect(expectStatus(await commit(body), 201).records[0].version).toBe(5);
    });

    test("tombstones keep their version: re-creating a deleted record names the tombstone's version", async () => {
      expectStatus(await commit(put("ev", "tomb", { v: 1 })), 201);
      const deleted = expectStatus(
        await commit({ records: [{ collection: "ev", id: "tomb", expectedVersion: 1, delete: true }] }),
        201,
      );
      expect(deleted.records[0]).toEqual({ collection: "ev", id: "tomb", version: 2, deleted: true });
      const gone = expectProblem(await server.request("GET", "/v1/records/ev/tomb"), 404);
      expect(gone.currentVersion).toBe(2);
      // It existed: "must never have existed" fails, naming the tombstone's version.
      expect(expectProblem(await commit(put("ev", "tomb", { v: 3 }, 0)), 409).currentVersion).toBe(2);
      expect(expectProblem(await commit(put("ev", "tomb", { v: 3 }, 1)), 409).currentVersion).toBe(2);
      // Deleting it again conflicts.
      const again = expectProblem(
        await commit({ records: [{ collection: "ev", id: "tomb", expectedVersion: 2, delete: true }] }),
        409,
      );
      expect(again.currentVersion).toBe(2);
      const recreated = expectStatus(await commit(put("ev", "tomb", { v: 3 }, 2)), 201);
      expect(recreated.records[0]).toEqual({ collection: "ev", id: "tomb", version: 3, deleted: false });
      const record = expectStatus(await server.request("GET", "/v1/records/ev/tomb"), 200);
      expect(record).toMatchObject({ version: 3, data: { v: 3 } });
    });

    test("deleting a record that never existed is 409 with currentVersion null", async () => {
      const body = expectProblem(
        await commit({ records: [{ collection: "ev", id: "nothing", delete: true }] }),
        409,
      );
      expect(body).toHaveProperty("currentVersion", null);
    });

    test("one conflicting record rolls back the whole commit", async () => {
      expectStatus(await commit(put("ev", "pair-a", { v: 1 })), 201);
      const body = {
        records: [
          { collection: "ev", id: "pair-a", expectedVersion: 1, data: { v: 2 } },
          { collection: "ev", id: "pair-b", expectedVersion: 5, data: { v: 1 } },
        ],
        events: [{ type: "pair.changed", aggregate: "pairs/1" }],
      };
      expectProblem(await commit(body), 409, "/records/1/expectedVersion");
      expect(expectStatus(await server.request("GET", "/v1/records/ev/pair-a"), 200).version).toBe(1);
      expect(await eventsOf(server, "pairs/1")).toEqual([]);
    });
  });

  describe("aggregate", () => {
    test("defaults to <collection>/<id> of the only record", async () => {
      const body = expectStatus(
        await commit({ ...put("agg", "one", { a: 1 }), events: [{ type: "agg.one" }] }),
        201,
      );
      expect(body.events[0].aggregate).toBe("agg/one");
    });

    test("is required (422) with zero records or several", async () => {
      expectProblem(await commit({ events: [{ type: "agg.none" }] }), 422, "/events/0/aggregate");
      const two = {
        records: [
          { collection: "agg", id: "x", data: {} },
          { collection: "agg", id: "y", data: {} },
        ],
        events: [{ type: "agg.ok", aggregate: "agg/x" }, { type: "agg.missing" }],
      };
      expectProblem(await commit(two), 422, "/events/1/aggregate");
      expectProblem(await server.request("GET", "/v1/records/agg/x"), 404);
    });

    test("may name any aggregate, also with several records", async () => {
      const body = expectStatus(
        await commit({
          records: [
            { collection: "agg", id: "p", data: {} },
            { collection: "agg", id: "q", data: {} },
          ],
          events: [{ type: "agg.both", aggregate: "orders/o-1" }],
        }),
        201,
      );
      expect(body.events[0]).toMatchObject({ aggregate: "orders/o-1", sequence: 1 });
    });
  });

  describe("schedule", () => {
    let clocked: TestServer;
    const NOW = Date.parse("2026-11-29T10:00:00.000Z");
    beforeAll(async () => {
      clocked = await startServer({ OUTBOXD_DEFAULT_DELIVER_WITHIN: "2h" }, { clock: () => NOW });
    });
    afterAll(async () => {
      await clocked.stop();
    });
    const event = async (fields: Record<string, unknown>) =>
      clocked.request("POST", "/v1/commits", {
        events: [{ type: "sched.t", aggregate: "sched/1", ...fields }],
      });
    const deliverBy = async (fields: Record<string, unknown>) =>
      Date.parse(expectStatus(await event(fields), 201).events[0].deliverBy);

    test("the default window is OUTBOXD_DEFAULT_DELIVER_WITHIN from the commit", async () => {
      expect(await deliverBy({})).toBe(NOW + 2 * HOUR);
    });

    test("deliverWithin starts at the commit, or at deliverAfter when that is later", async () => {
      expect(await deliverBy({ deliverWithin: "30m" })).toBe(NOW + 30 * 60_000);
      const later = new Date(NOW + 5 * HOUR).toISOString();
      expect(await deliverBy({ deliverWithin: "1h", deliverAfter: later })).toBe(NOW + 6 * HOUR);
      expect(await deliverBy({ deliverAfter: later })).toBe(NOW + 7 * HOUR);
      const earlier = new Date(NOW - 5 * HOUR).toISOString();
      expect(await deliverBy({ deliverWithin: "1h", deliverAfter: earlier })).toBe(NOW + HOUR);
    });

    test("deliverAfter is stored and holds the delivery back until then", async () => {
      const endpointId = await createEndpoint(clocked, ["sched.after"]);
      const after = "2026-11-29T13:00:00.000Z";
      const body = expectStatus(
        await clocked.request("POST", "/v1/commits", {
          events: [{ type: "sched.after", aggregate: "sched/after", deliverAfter: after }],
        }),
        201,
      );
      const stored = expectStatus(await clocked.request("GET", `/v1/events/${body.events[0].id}`), 200);
      expect(stored.deliverAfter).toBe(after);
      expect(stored.deliveries).toHaveLength(1);
      expect(stored.deliveries[0]).toMatchObject({ endpointId, status: "pending", nextAttemptAt: after });
    });

    test("deliverBy is taken as given", async () => {
      expect(await deliverBy({ deliverBy: "2026-11-30T00:00:00Z" })).toBe(Date.parse("2026-11-30T00:00:00Z"));
      // An offset is honoured: 14:00+02:00 is 12:00Z.
      expect(await deliverBy({ deliverBy: "2026-11-29T14:00:00+02:00" })).toBe(NOW + 2 * HOUR);
    });

    test("deliverBy at or before now, or not after deliverAfter, is 422", async () => {
      expectProblem(await event({ deliverBy: "2026-11-29T09:59:59Z" }), 422, "/events/0/deliverBy");
      expectProblem(await event({ deliverBy: "2026-11-29T10:00:00Z" }), 422, "/events/0/deliverBy");
      expectProblem(
        await event({ deliverBy: "2026-11-29T11:00:00Z", deliverAfter: "2026-11-29T12:00:00Z" }),
        422,
        "/events/0/deliverBy",
      );
    });

    test("deliverBy and deliverWithin together are 422", async () => {
      expectProblem(
        await event({ deliverBy: "2026-11-30T00:00:00Z", deliverWithin: "1h" }),
        422,
        "/events/0/deliverWithin",
      );
    });

    test("a zero deliverWithin is 422", async () => {
      expectProblem(await event({ deliverWithin: "0s" }), 422, "/events/0/deliverWithin");
    });
  });

  describe("fan-out", () => {
    let fan: TestServer;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      // No dispatcher: the statuses checked here are what the commit stored.
      fan = await startServer({}, { dispatch: false });
      ids.prefix = await createEndpoint(fan, ["return.*"]);
      ids.exact = await createEndpoint(fan, ["return.approved"]);
      ids.star = await createEndpoint(fan, ["*"]);
      ids.none = await createEndpoint(fan);
      ids.order = await createEndpoint(fan, ["order.*", "invoice.paid"]);
    });
    afterAll(async () => {
      await fan.stop();
    });
    const targets = async (event: Record<string, unknown>) => {
      const body = expectStatus(
        await fan.request("POST", "/v1/commits", { events: [{ aggregate: "fan/1", ...event }] }),
        201,
      );
      const byId = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
      return (body.events[0].deliveries as { endpointId: string }[]).map((d) => byId[d.endpointId]).sort();
    };

    test("type patterns: prefix.*, exact, * and none", async () => {
      expect(await targets({ type: "return.approved" })).toEqual(["exact", "none", "prefix", "star"]);
      expect(await targets({ type: "return.item.received" })).toEqual(["none", "prefix", "star"]);
      // `return.*` needs at least one more segment, and a shared prefix of letters is not a segment.
      expect(await targets({ type: "return" })).toEqual(["none", "star"]);
      expect(await targets({ type: "returned.x" })).toEqual(["none", "star"]);
      expect(await targets({ type: "order.created" })).toEqual(["none", "order", "star"]);
      expect(await targets({ type: "invoice.paid" })).toEqual(["none", "order", "star"]);
      expect(await targets({ type: "invoice.paid.late" })).toEqual(["none", "star"]);
    });

    test("explicit endpoints replace type-based fan-out", async () => {
      expect(await targets({ type: "return.approved", endpoints: [ids.order] })).toEqual(["order"]);
      expect(await targets({ type: "return.approved", endpoints: [ids.order, ids.exact] })).toEqual([
        "exact",
        "order",
      ]);
      expect(await targets({ type: "return.approved", endpoints: [] })).toEqual([]);
    });

    test("each delivery is stored pending for its event", async () => {
      const body = expectStatus(
        await fan.request("POST", "/v1/commits", {
          events: [{ type: "order.created", aggregate: "fan/stored" }],
        }),
        201,
      );
      const [event] = body.events;
      const deliveries = expectStatus(await fan.request("GET", `/v1/events/${event.id}`), 200).deliveries;
      expect(deliveries.map((d: { id: string }) => d.id).sort()).toEqual(
        event.deliveries.map((d: { id: string }) => d.id).sort(),
      );
      for (const delivery of deliveries) expect(delivery.status).toBe("pending");
    });

    test("an unknown explicit endpoint id is 422 at its pointer and stores nothing", async () => {
      const before = await totals(fan);
      expectProblem(
        await fan.request("POST", "/v1/commits", {
          events: [{ type: "x.y", aggregate: "fan/unknown", endpoints: ["ep_doesnotexist"] }],
        }),
        422,
        "/events/0/endpoints/0",
      );
      expectProblem(
        await fan.request("POST", "/v1/commits", {
          events: [
            { type: "x.y", aggregate: "fan/unknown", endpoints: [ids.star] },
            { type: "x.y", aggregate: "fan/unknown", endpoints: [ids.star, "ep_nope"] },
          ],
        }),
        422,
        "/events/1/endpoints/1",
      );
      expect(await totals(fan)).toEqual(before);
      expect(await eventsOf(fan, "fan/unknown")).toEqual([]);
    });
  });

  describe("client-supplied event ids", () => {
    test("the same event again returns the stored event and takes no new sequence", async () => {
      const id = crypto.randomUUID();
      const event = { id, type: "cid.made", aggregate: "cid/1", payload: { n: 1 } };
      const first = expectStatus(await commit({ events: [event] }), 201);
      expect(first.events[0]).toMatchObject({ id, sequence: 1 });
      const again = expectStatus(await commit({ events: [event] }), 201);
      expect(again.events[0]).toEqual(first.events[0]);
      // Upper-case spelling of the same UUID is the same event.
      const upper = expectStatus(await commit({ events: [{ ...event, id: id.toUpperCase() }] }), 201);
      expect(upper.events[0]).toEqual(first.events[0]);
      const next = expectStatus(await commit({ events: [{ type: "cid.made", aggregate: "cid/1" }] }), 201);
      expect(next.events[0].sequence).toBe(2);
      expect((await eventsOf(server, "cid/1")).map((e) => [e.id, e.sequence])).toEqual([
        [id, 1],
        [next.events[0].id, 2],
      ]);
    });

    test("the same payload with its keys in another order is the same content", async () => {
      const id = crypto.randomUUID();
      const first = expectStatus(
        await commit(
          `{"events": [{"id": "${id}", "type": "cid.made", "aggregate": "cid/keys", "payload": {"a": 1, "b": {"c": 2, "d": 3}}}]}`,
        ),
        201,
      );
      const again = expectStatus(
        await commit(
          `{"events": [{"payload": {"b": {"d": 3, "c": 2}, "a": 1}, "aggregate": "cid/keys", "type": "cid.made", "id": "${id}"}]}`,
        ),
        201,
      );
      expect(again.events[0]).toEqual(first.events[0]);
      expect(await eventsOf(server, "cid/keys")).toHaveLength(1);
    });

    test("the same id with different content is 409 and stores nothing", async () => {
      const id = crypto.randomUUID();
      expectStatus(
        await commit({ events: [{ id, type: "cid.made", aggregate: "cid/2", payload: { n: 1 } }] }),
        201,
      );
      for (const change of [{ payload: { n: 2 } }, { type: "cid.other" }, { aggregate: "cid/3" }]) {
        const body = expectProblem(
          await commit({
            ...put("cid", "rec", { touched: true }),
            events: [{ id, type: "cid.made", aggregate: "cid/2", payload: { n: 1 }, ...change }],
          }),
          409,
          "/events/0/id",
        );
        expect(body.type).toEndWith("event-id-taken");
      }
      expectProblem(await server.request("GET", "/v1/records/cid/rec"), 404);
      expect(await eventsOf(server, "cid/2")).toHaveLength(1);
      expect(await eventsOf(server, "cid/3")).toEqual([]);
    });

    test("a retry by event ids with the same records answers the first commit and writes nothing", async () => {
      const endpointId = await createEndpoint(server, ["cid.retried"]);
      const id = crypto.randomUUID();
      const body = {
        records: [{ collection: "cid-retry", id: "r-1", data: { status: "paid", lines: [1, 2] } }],
        events: [
          { id, type: "cid.retried", aggregate: "cid-retry/r-1", payload: { n: 1 } },
          { id: crypto.randomUUID(), type: "cid.retried", aggregate: "cid-retry/r-1", payload: { n: 2 } },
        ],
      };
      const first = expectStatus(await commit(body), 201);
      expect(first.events[0].deliveries).toEqual([{ id: expect.any(String), endpointId }]);
      const ledger = expectStatus(await server.request("GET", "/v1/ledger"), 200);
      // The same records in another key order are the same records.
      const retry = {
        ...body,
        records: [{ data: { lines: [1, 2], status: "paid" }, id: "r-1", collection: "cid-retry" }],
      };
      const again = await commit(retry);
      expect(expectStatus(again, 201)).toEqual(first);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      // Nothing written: no commit in the ledger, no new version of the record, no new event.
      expect(expectStatus(await server.request("GET", "/v1/ledger"), 200)).toEqual(ledger);
      const history = expectStatus(await server.request("GET", "/v1/records/cid-retry/r-1/history"), 200);
      expect(history.data.map((v: { version: number; commitId: string }) => [v.version, v.commitId])).toEqual(
        [[1, first.commitId]],
      );
      expect(await eventsOf(server, "cid-retry/r-1")).toHaveLength(2);
    });

    test("a retry by event ids answers the first commit's stored response while its Idempotency-Key keeps it", async () => {
      const id = crypto.randomUUID();
      const body = { events: [{ id, type: "cid.made", aggregate: "cid-key/1", payload: { n: 1 } }] };
      const first = expectStatus(await commit(body, { "idempotency-key": `k-${id}` }), 201);
      const ledger = expectStatus(await server.request("GET", "/v1/ledger"), 200);
      expect(ledger.head.commitId).toBe(first.commitId);
      expect(expectStatus(await commit(body), 201)).toEqual(first);
      expect(expectStatus(await server.request("GET", "/v1/ledger"), 200)).toEqual(ledger);
    });

    test("any other reuse of stored event ids is 409 event-id-taken and writes nothing", async () => {
      const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
      const events = [
        { id: a, type: "cid.made", aggregate: "cid-other/1", payload: { n: 1 } },
        { id: b, type: "cid.made", aggregate: "cid-other/1", payload: { n: 2 } },
      ];
      const records = [{ collection: "cid-other", id: "r-1", data: { v: 1 } }];
      const first = expectStatus(await commit({ records, events }), 201);
      const reused = { id: crypto.randomUUID(), type: "cid.made", aggregate: "cid-other/2", payload: {} };
      expectStatus(await commit({ events: [reused] }), 201);
      // Some of the first commit's events, in any order, retry it: its whole answer.
      expect(expectStatus(await commit({ records, events: [events[1]] }), 201)).toEqual(first);
      const ledger = expectStatus(await server.request("GET", "/v1/ledger"), 200);
      const reuses = [
        // other records, no records, more records
        { records: [{ collection: "cid-other", id: "r-1", data: { v: 2 } }], events },
        { events },
        { records: [...records, { collection: "cid-other", id: "r-2", data: {} }], events },
        // an expectation the first commit did not meet
        { records: [{ ...records[0], expectedVersion: 3 }], events },
        // one more event, or an event of another commit
        { records, events: [...events, { type: "cid.made", aggregate: "cid-other/1" }] },
        { records, events: [events[0], reused] },
      ];
      for (const reuse of reuses) {
        const body = expectProblem(await commit(reuse), 409, "/events/0/id");
        expect(body.type).toEndWith("event-id-taken");
      }
      expect(expectStatus(await server.request("GET", "/v1/ledger"), 200)).toEqual(ledger);
      expect(await eventsOf(server, "cid-other/1")).toHaveLength(2);
      expect(await eventsOf(server, "cid-other/2")).toHaveLength(1);
      const record = expectStatus(await server.request("GET", "/v1/records/cid-other/r-1"), 200);
      expect(record.version).toBe(1);
    });

    test("a non-UUID id is 422", async () => {
      expectProblem(
        await commit({ events: [{ id: "not-a-uuid", type: "a.b", aggregate: "x" }] }),
        422,
        "/events/0/id",
      );
    });
  });

  describe("Idempotency-Key", () => {
    test("a retry gets the identical response with Idempotent-Replayed: true and creates nothing", async () => {
      await createEndpoint(server, ["idem.*"]);
      const key = `key-${crypto.randomUUID()}`;
      const body = { ...put("idem", "a", { n: 1 }), events: [{ type: "idem.made", payload: { n: 1 } }] };
      const first = await commit(body, { "idempotency-key": key });
      expectStatus(first, 201);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      const before = await totals(server);
      // The same JSON with keys in another order and other whitespace is the same request.
      const reordered = `{ "events": [{"payload": {"n": 1}, "type": "idem.made"}],
        "records": [{"data": {"n": 1}, "id": "a", "collection": "idem"}] }`;
      for (const retry of [body, reordered]) {
        const replay = await commit(retry, { "idempotency-key": key });
        expectStatus(replay, 201);
        expect(replay.headers.get("idempotent-replayed")).toBe("true");
        expect(replay.body).toEqual(first.body);
      }
      expect(await totals(server)).toEqual(before);
      expect(expectStatus(await server.request("GET", "/v1/records/idem/a"), 200).version).toBe(1);
      expect((await eventsOf(server, "idem/a")).length).toBe(1);
    });

    test("the same key with another body is 422", async () => {
      const key = `key-${crypto.randomUUID()}`;
      expectStatus(await commit(put("idem", "b", { n: 1 }), { "idempotency-key": key }), 201);
      expectProblem(
        await commit(put("idem", "b", { n: 2 }), { "idempotency-key": key }),
        422,
        "header:Idempotency-Key",
      );
      expect(expectStatus(await server.request("GET", "/v1/records/idem/b"), 200).data).toEqual({ n: 1 });
    });

    test("a key whose stored response expired (not yet pruned) is free: another body commits, then replays", async () => {
      const key = `key-${crypto.randomUUID()}`;
      const first = expectStatus(
        await commit(put("idem", "expired", { n: 1 }), { "idempotency-key": key }),
        201,
      );
      // Its row outlives the TTL until retention prunes it: age it instead of waiting a day.
      await exec(server, "UPDATE idempotency_keys SET created_at = created_at - :age WHERE commit_id = :id", {
        age: IDEMPOTENCY_TTL_MS + 1_000,
        id: first.commitId,
      });
      const second = await commit(put("idem", "expired", { n: 2 }), { "idempotency-key": key });
      expect(expectStatus(second, 201).commitId).not.toBe(first.commitId);
      expect(second.headers.get("idempotent-replayed")).toBeNull();
      const replay = await commit(put("idem", "expired", { n: 2 }), { "idempotency-key": key });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(second.body);
      expect(expectStatus(await server.request("GET", "/v1/records/idem/expired"), 200).version).toBe(2);
    });

    test("keys are scoped to the token", async () => {
      const other = expectStatus(
        await server.request("POST", "/v1/tokens", { name: "idem-other", scopes: ["commit"] }),
        201,
      ).token;
      const key = `key-${crypto.randomUUID()}`;
      const first = expectStatus(
        await commit(put("idem", "scoped", { n: 1 }), { "idempotency-key": key }),
        201,
      );
      const second = await server.request("POST", "/v1/commits", put("idem", "scoped", { n: 1 }), {
        authorization: `Bearer ${other}`,
        "idempotency-key": key,
      });
      expectStatus(second, 201);
      expect(second.headers.get("idempotent-replayed")).toBeNull();
      expect(second.body.commitId).not.toBe(first.commitId);
      expect(second.body.records[0].version).toBe(2);
    });

    test("an empty or over-long key is 422", async () => {
      expectProblem(await commit(put("idem", "k", {}), { "idempotency-key": "x".repeat(256) }), 422);
      expectStatus(await commit(put("idem", "k", {}), { "idempotency-key": "x".repeat(255) }), 201);
    });

    test("failures are not stored: a 409 with a key, then the fixed request with that key succeeds", async () => {
      expectStatus(await commit(put("idem", "fail", { n: 1 })), 201);
      const key = `key-${crypto.randomUUID()}`;
      expectProblem(await commit(put("idem", "fail", { n: 2 }, 5), { "idempotency-key": key }), 409);
      // A validation failure with the same key is not stored either.
      expectProblem(await commit({ records: [] }, { "idempotency-key": key }), 422);
      const fixed = await commit(put("idem", "fail", { n: 2 }, 1), { "idempotency-key": key });
      expectStatus(fixed, 201);
      expect(fixed.headers.get("idempotent-replayed")).toBeNull();
      expect(fixed.body.records[0].version).toBe(2);
      const replay = await commit(put("idem", "fail", { n: 2 }, 1), { "idempotency-key": key });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(fixed.body);
    });

    test("a retry while the first is still running is 409 idempotency-in-progress (in-process, same tick)", async () => {
      // Two requests handed to the app in the same turn of the event loop: the second reaches
      // the key guard before the Writer has even started the first one's transaction.
      const key = `key-${crypto.randomUUID()}`;
      const request = () =>
        server.outboxd.http.fetch(
          new Request("http://outboxd.test/v1/commits", {
            method: "POST",
            headers: {
              authorization: `Bearer ${server.token}`,
              "content-type": "application/json",
              "idempotency-key": key,
            },
            body: JSON.stringify(put("idem", "race-1", { n: 1 })),
          }),
        );
      const [first, second] = await Promise.all([request(), request()]);
      expect(first.status).toBe(201);
      expect(second.status).toBe(409);
      expect(second.headers.get("content-type")).toStartWith("application/problem+json");
      const problem = (await second.json()) as { type: string; status: number };
      expect(problem.type).toEndWith("idempotency-in-progress");
      // Once the first has finished, the retry is a replay.
      const firstBody = await first.json();
      const retry = await commit(put("idem", "race-1", { n: 1 }), { "idempotency-key": key });
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.body).toEqual(firstBody);
    });

    describe("over time", () => {
      let clocked: TestServer;
      let now = Date.parse("2026-11-29T10:00:00.000Z");
      beforeAll(async () => {
        clocked = await startServer({}, { clock: () => now });
      });
      afterAll(async () => {
        await clocked.stop();
      });
      const commitAt = (body: unknown, key: string) =>
        clocked.request("POST", "/v1/commits", body, { "idempotency-key": key });

      test("a replay does not re-validate time-relative rules: a deliverBy now past still replays", async () => {
        const key = `key-${crypto.randomUUID()}`;
        const body = {
          events: [
            { type: "idem.late", aggregate: "idem/late", deliverBy: new Date(now + HOUR).toISOString() },
          ],
        };
        const first = expectStatus(await commitAt(body, key), 201);
        now += 2 * HOUR;
        const replay = await commitAt(body, key);
        expectStatus(replay, 201);
        expect(replay.headers.get("idempotent-replayed")).toBe("true");
        expect(replay.body).toEqual(first);
        // Without the key the same body is now refused: its deadline has passed.
        expectProblem(await clocked.request("POST", "/v1/commits", body), 422, "/events/0/deliverBy");
      });

      test("a key is kept for 24h: after that the same key is a new request", async () => {
        const key = `key-${crypto.randomUUID()}`;
        const first = expectStatus(await commitAt(put("idem", "day", { n: 1 }), key), 201);
        now += 23 * HOUR;
        const within = await commitAt(put("idem", "day", { n: 1 }), key);
        expect(within.headers.get("idempotent-replayed")).toBe("true");
        expect(within.body).toEqual(first);
        expectProblem(await commitAt(put("idem", "day", { n: 2 }), key), 422);
        now += 2 * HOUR;
        const afterADay = await commitAt(put("idem", "day", { n: 2 }), key);
        expectStatus(afterADay, 201);
        expect(afterADay.headers.get("idempotent-replayed")).toBeNull();
        expect(afterADay.body.records[0].version).toBe(2);
        // …and is then kept for that new request.
        const replay = await commitAt(put("idem", "day", { n: 2 }), key);
        expect(replay.headers.get("idempotent-replayed")).toBe("true");
        expect(replay.body).toEqual(afterADay.body);
      });
    });

    test("many concurrent identical requests over HTTP: one original, the rest replays or in-progress", async () => {
      const key = `key-${crypto.randomUUID()}`;
      const body = { ...put("idem", "race-2", { n: 1 }), events: [{ type: "idem.race" }] };
      const answers = await Promise.all(
        Array.from({ length: 30 }, () => commit(body, { "idempotency-key": key })),
      );
      const originals = answers.filter(
        (a) => a.status === 201 && a.headers.get("idempotent-replayed") === null,
      );
      expect(originals).toHaveLength(1);
      const original = originals[0]?.body;
      for (const answer of answers) {
        if (answer.status === 201) {
          expect(answer.body).toEqual(original);
        } else {
          expect(expectProblem(answer, 409).type).toEndWith("idempotency-in-progress");
        }
      }
      expect(expectStatus(await server.request("GET", "/v1/records/idem/race-2"), 200).version).toBe(1);
      expect(await eventsOf(server, "idem/race-2")).toHaveLength(1);
    });
  });

  test("50 parallel writers to one record: only the winners bump the version, sequences stay contiguous", async () => {
    expectStatus(await commit({ ...put("race", "r", { writer: -1 }), events: [{ type: "race.w" }] }), 201);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, async (_, writer) => {
        const read = expectStatus(await server.request("GET", "/v1/records/race/r"), 200);
        const response = await commit({
          ...put("race", "r", { writer }, read.version),
          events: [{ type: "race.w", payload: { writer } }],
        });
        return { expected: read.version as number, response };
      }),
    );
    const wins = outcomes.filter((o) => o.response.status === 201);
    const losses = outcomes.filter((o) => o.response.status !== 201);
    expect(wins.length).toBeGreaterThanOrEqual(1);
    for (const loss of losses) {
      const problem = expectProblem(loss.response, 409, "/records/0/expectedVersion");
      expect(typeof problem.currentVersion).toBe("number");
      expect(problem.currentVersion).toBeGreaterThan(loss.expected);
    }
    // Every winner moved the version from what it read to the next one; no two share a version.
    const versions = wins.map((w) => w.response.body.records[0].version as number);
    for (const win of wins) expect(win.response.body.records[0].version).toBe(win.expected + 1);
    expect(new Set(versions).size).toBe(wins.length);
    const record = expectStatus(await server.request("GET", "/v1/records/race/r"), 200);
    expect(record.version).toBe(1 + wins.length);
    const events = await eventsOf(server, "race/r");
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 1 + wins.length }, (_, i) => i + 1));
    // The record's data is that of the winner whose event came last.
    expect(record.data).toEqual({ writer: events.at(-1).payload.writer });
  });

  test("50 parallel unconditional writers to one aggregate: sequences 1..50, no repeats or gaps", async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        commit({ ...put("race", "free", { i }), events: [{ type: "race.free", payload: { i } }] }),
      ),
    );
    for (const response of responses) expectStatus(response, 201);
    const sequences = responses.map((r) => r.body.events[0].sequence as number).sort((a, b) => a - b);
    expect(sequences).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const versions = responses.map((r) => r.body.records[0].version as number).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect((await eventsOf(server, "race/free")).map((e) => e.sequence)).toEqual(sequences);
  });

  test("atomicity: a failure after the record writes leaves nothing (no record, event, delivery, sequence)", async () => {
    const endpointId = await createEndpoint(server, ["atom.*"]);
    const before = await totals(server);
    const body = {
      records: [{ collection: "atom", id: "a", data: { n: 1 } }],
      events: [
        // The first event is written with a delivery before the second one's unknown endpoint throws.
        { type: "atom.made", endpoints: [endpointId] },
        { type: "atom.made", endpoints: ["ep_unknown"] },
      ],
    };
    expectProblem(await commit(body), 422, "/events/1/endpoints/0");
    const absent = expectProblem(await server.request("GET", "/v1/records/atom/a"), 404);
    expect(absent).toHaveProperty("currentVersion", null);
    expect(await eventsOf(server, "atom/a")).toEqual([]);
    expect(await totals(server)).toEqual(before);
    const good = expectStatus(
      await commit({ ...put("atom", "a", { n: 2 }), events: [{ type: "atom.made" }] }),
      201,
    );
    expect(good.records[0].version).toBe(1);
    expect(good.events[0].sequence).toBe(1);
    expect(good.events[0].deliveries.map((d: { endpointId: string }) => d.endpointId)).toEqual([endpointId]);
  });
});
