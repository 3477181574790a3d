// The dispatcher's storage operations on a real database file, with no dispatcher running:
// which rows a claim takes (due, unleased, before the deadline, head of their queue, within
// the endpoint's room), the completion fence, deadline expiry and retention (DESIGN §2, §6).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type ClaimedDelivery, claimDeliveries, claimDeliveriesById } from "../../src/deliveries/claim.ts";
import { type Completion, completeDeliveries, completeDelivery } from "../../src/deliveries/complete.ts";
import { expireDeadlines } from "../../src/deliveries/expire.ts";
import { prune } from "../../src/deliveries/retention.ts";
import { MAX_ROWS } from "../../src/deliveries/rows.ts";
import { completeAndClaimWrite } from "../../src/dispatch/writes.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";
import { commitEvents, deliveryRow, exec, expectStatus, onlyDelivery, sql } from "./harness.ts";

const LEASE = 60_000;

describe("dispatch queries", () => {
  let server: TestServer;
  let endpointId: string;
  let n = 0;
  beforeAll(async () => {
    // The delivery SQL itself, as raw operations through this thread's Writer: the writer on this thread.
    server = await startServer({}, { dispatch: false, writer: "here" });
    endpointId = await newEndpoint();
  });
  afterAll(async () => {
    await server.stop();
  });

  async function newEndpoint(): Promise<string> {
    const body = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/never-called" }),
      201,
    );
    return body.id;
  }

  /** Commits `count` events of one fresh aggregate to `endpoint`; returns their delivery ids. */
  async function queue(count: number, endpoint = endpointId): Promise<string[]> {
    n += 1;
    const aggregate = `q/${n}`;
    const events = await commitEvents(
      server,
      Array.from({ length: count }, () => ({ aggregate, endpoints: [endpoint] })),
    );
    return events.map(onlyDelivery);
  }

  /** Takes every claimable row out of the way, so each test sees only its own rows. */
  async function drain(): Promise<void> {
    await exec(
      server,
      "UPDATE deliveries SET status = 'delivered', delivered_at = 0 WHERE status = 'pending'",
    );
  }

  const claim = (
    owner: string,
    now = Date.now(),
    more: Partial<Parameters<typeof claimDeliveries>[0]> = {},
  ) =>
    server.outboxd.db.writer.write(
      claimDeliveries({
        owner,
        now,
        leaseMs: LEASE,
        limit: 100,
        endpointRoom: {},
        endpointLimit: 100,
        ...more,
      }),
    );

  const complete = (delivery: ClaimedDelivery, owner: string, completion: Completion, statusCode: number) =>
    server.outboxd.db.writer.write(
      completeDelivery(
        {
          deliveryId: delivery.id,
          owner,
          endpointId: delivery.endpointId,
          startedAt: Date.now(),
          durationMs: 3,
          statusCode,
          error: null,
          responsePrefix: null,
        },
        completion,
      ),
    );

  test("a claim takes only the head of each (endpoint, aggregate) queue and leases it; a second claim gets nothing", async () => {
    await drain();
    const a = await queue(3);
    const b = await queue(1);
    const now = Date.now();
    const claimed = await claim("owner-1", now);
    expect(claimed.map((d) => d.id).sort()).toEqual([a[0], b[0]].sort() as string[]);
    for (const d of claimed) {
      expect(d).toMatchObject({ sequence: 1, attemptCount: 1, endpointId });
      const row = await deliveryRow(server, d.id);
      expect(row.lease_owner).toBe("owner-1");
      expect(row.lease_expires_at).toBe(now + LEASE);
    }
    expect(await claim("owner-2", now + 1)).toEqual([]);
  });

  test("a batch of completions: each fenced on its own lease, delivered ones set-based, next heads promoted, counted once", async () => {
    await drain();
    const a = await queue(2);
    const b = await queue(2);
    const c = await queue(1);
    const claimed = await claim("batch-1");
    expect(claimed.map((d) => d.id).sort()).toEqual([a[0], b[0], c[0]].sort() as string[]);
    const byId = new Map(claimed.map((d) => [d.id, d]));
    const item = (id: string, owner: string, completion: Completion, statusCode: number) => {
      const d = byId.get(id) as ClaimedDelivery;
      const attempt = {
        deliveryId: d.id,
        owner,
        endpointId: d.endpointId,
        aggregate: d.aggregate,
        startedAt: Date.now(),
        durationMs: 2,
        statusCode,
        error: null,
        responsePrefix: null,
      };
      return { attempt, completion };
    };
    const at = Date.now();
    const [minuteBefore] = await sql<{ n: number }>(
      server,
      "SELECT coalesce(sum(count), 0) AS n FROM delivered_minutes WHERE endpoint_id = :endpointId",
      { endpointId },
    );
    const { recorded, promoted } = await server.outboxd.db.writer.write(
      completeDeliveries([
        item(a[0] as string, "batch-1", { kind: "delivered", at, latencyMs: 4 }, 200),
        // A late finisher of an older claim: refused by the fence, still logged.
        item(b[0] as string, "someone-else", { kind: "delivered", at, latencyMs: 4 }, 200),
        item(c[0] as string, "batch-1", { kind: "retry", at, nextAttemptAt: at + 60_000 }, 500),
      ]),
    );
    expect(recorded).toEqual([true, false, true]);
    expect((await deliveryRow(server, a[0] as string)).status).toBe("delivered");
    expect(await deliveryRow(server, b[0] as string)).toMatchObject({
      status: "pending",
      lease_owner: "batch-1",
    });
    expect(await deliveryRow(server, c[0] as string)).toMatchObject({ status: "pending", lease_owner: null });
    // a's successor is its queue's head now; b's is not (b's head is still pending).
    const head = async (id: string) =>
      (await sql<{ h: number }>(server, "SELECT is_head AS h FROM deliveries WHERE id = :id", { id }))[0]?.h;
    expect(await head(a[1] as string)).toBe(1);
    expect(await head(b[1] as string)).toBe(0);
    // The batch names the heads it promoted, with their rowids: the dispatcher claims them by rowid.
    expect(promoted.map(({ id, endpointId }) => ({ id, endpointId }))).toEqual([
      { id: a[1] as string, endpointId },
    ]);
    const [rowOfHead] = await sql<{ rid: number }>(
      server,
      "SELECT rowid AS rid FROM deliveries WHERE id = :id",
      {
        id: a[1] as string,
      },
    );
    expect(promoted[0]?.rid).toBe(rowOfHead?.rid as number);
    const [minuteAfter] = await sql<{ n: number }>(
      server,
      "SELECT coalesce(sum(count), 0) AS n FROM delivered_minutes WHERE endpoint_id = :endpointId",
      { endpointId },
    );
    expect((minuteAfter?.n ?? 0) - (minuteBefore?.n ?? 0)).toBe(1);
    for (const id of [a[0], b[0], c[0]]) {
      const rows = await sql<{ n: number }>(
        server,
        "SELECT count(*) AS n FROM attempts WHERE delivery_id = :id",
        {
          id: id as string,
        },
      );
      expect(rows[0]?.n).toBe(1);
    }
  });

  /** An item of a batch: the claimed row delivered under `owner`, named by rowid (`rid`,
   * the claim's unless given) and queue position. */
  const delivered = (d: ClaimedDelivery, owner: string, at = Date.now(), rid = d.rid) => ({
    attempt: {
      deliveryId: d.id,
      owner,
      endpointId: d.endpointId,
      startedAt: at,
      durationMs: 2,
      statusCode: 200,
      error: null,
      responsePrefix: null,
      sent: { rid, aggregate: d.aggregate, sequence: d.sequence },
    },
    completion: { kind: "delivered", at, latencyMs: 2 } as Completion,
  });

  test("a batch whose rows the sender names by rowid and queue position: the same fence and promotion; a rowid that now names another row is refused", async () => {
    await drain();
    const a = await queue(3);
    const b = await queue(2);
    const claimed = await claim("by-rowid");
    expect(claimed.map((d) => d.id).sort()).toEqual([a[0], b[0]].sort() as string[]);
    const [ca, cb] = [a[0], b[0]].map((id) => claimed.find((d) => d.id === id) as ClaimedDelivery);
    if (!ca || !cb) throw new Error("not claimed");
    expect(typeof ca.rid).toBe("number");
    const at = Date.now();
    // b's item names a's rowid (as after a VACUUM renumbered rows): a row of the same lease, yet
    // not the one sent; the fence refuses it and a stays as a's own item leaves it.
    const { recorded, promoted } = await server.outboxd.db.writer.write(
      completeDeliveries([delivered(ca, "by-rowid", at), delivered(cb, "by-rowid", at, ca.rid)]),
    );
    expect(recorded).toEqual([true, false]);
    expect((await deliveryRow(server, a[0] as string)).status).toBe("delivered");
    expect(await deliveryRow(server, b[0] as string)).toMatchObject({
      status: "pending",
      lease_owner: "by-rowid",
    });
    // a's successor found from the position given, b's queue untouched (its head is still pending).
    expect(promoted.map((p) => p.id)).toEqual([a[1] as string]);
    // Promoted, not leased (no lease given): a claim by id takes it, once.
    expect(
      (
        await claimById(
          "next",
          promoted.map((p) => p.id),
        )
      ).map((d) => d.id),
    ).toEqual([a[1] as string]);
    expect(
      await claimById(
        "again",
        promoted.map((p) => p.id),
      ),
    ).toEqual([]);
  });

  const claimById = (owner: string, ids: string[], now = Date.now()) =>
    server.outboxd.db.writer.write(claimDeliveriesById({ owner, now, leaseMs: LEASE, ids }));

  test("a promotion given a lease leases the heads it makes that a claim could take now, in the same statement; the others are promoted only", async () => {
    await drain();
    const due = await queue(2);
    const later = await queue(2);
    const late = await queue(2);
    const off = await queue(2, await newEndpoint());
    const taken = await queue(2);
    const claimed = await claim("promote-1");
    const first = (ids: string[]) => claimed.find((d) => d.id === ids[0]) as ClaimedDelivery;
    expect(claimed.length).toBe(5);
    const now = Date.now();
    // The successors: one not due yet, one past its deadline, one at an endpoint disabled since,
    // one leased by someone else (a lease that has not run out).
    await exec(server, "UPDATE deliveries SET next_attempt_at = :at WHERE id = :id", {
      id: later[1] as string,
      at: now + 60_000,
    });
    await exec(server, "UPDATE deliveries SET deliver_by = :at WHERE id = :id", {
      id: late[1] as string,
      at: now,
    });
    await exec(
      server,
      "UPDATE endpoints SET disabled = 1 WHERE id = (SELECT endpoint_id FROM deliveries WHERE id = :id)",
      {
        id: off[1] as string,
      },
    );
    await exec(server, "UPDATE deliveries SET lease_owner = 'other', lease_expires_at = :at WHERE id = :id", {
      id: taken[1] as string,
      at: now + 60_000,
    });
    const { recorded, promoted, leased } = await server.outboxd.db.writer.write(
      completeDeliveries(
        [due, later, late, off, taken].map((ids) => delivered(first(ids), "promote-1", now)),
        { owner: "promote-2", now, leaseMs: LEASE },
      ),
    );
    expect(recorded).toEqual([true, true, true, true, true]);
    // Every successor is its queue's head; only the one a claim could take is leased.
    expect(promoted.map((p) => p.id).sort()).toEqual(
      [due, later, late, off, taken].map((ids) => ids[1] as string).sort(),
    );
    expect(leased.map((d) => d.id)).toEqual([due[1] as string]);
    const [row] = await sql<{ rid: number; is_head: number }>(
      server,
      "SELECT rowid AS rid, is_head FROM deliveries WHERE id = :id",
      { id: due[1] as string },
    );
    expect(leased[0]).toMatchObject({
      rid: row?.rid,
      endpointId,
      aggregate: first(due).aggregate,
      sequence: 2,
      attemptCount: 1,
    });
    expect(await deliveryRow(server, due[1] as string)).toMatchObject({
      lease_owner: "promote-2",
      lease_expires_at: now + LEASE,
      attempt_count: 1,
    });
    for (const ids of [later, late, off]) {
      const head = await deliveryRow(server, ids[1] as string);
      expect(head).toMatchObject({ status: "pending", lease_owner: null, attempt_count: 0 });
    }
    expect(await deliveryRow(server, taken[1] as string)).toMatchObject({
      lease_owner: "other",
      attempt_count: 0,
    });
    for (const ids of [due, later, late, off, taken]) {
      const [h] = await sql<{ h: number }>(server, "SELECT is_head AS h FROM deliveries WHERE id = :id", {
        id: ids[1] as string,
      });
      expect(h?.h).toBe(1);
    }
    // Leased once: a claim by id takes nothing of it.
    expect(await claimById("again", [due[1] as string], now + 1)).toEqual([]);
  });

  test("a batch of outcomes claims the heads its promotion leased within the room; the rest get their lease back and stay hints", async () => {
    await drain();
    const queues = [await queue(2), await queue(2), await queue(2)];
    const claimed = await claim("room-1");
    const first = (ids: string[]) => claimed.find((d) => d.id === ids[0]) as ClaimedDelivery;
    const now = Date.now();
    const answer = await server.outboxd.db.write(
      completeAndClaimWrite(
        queues.map((ids) => delivered(first(ids), "room-1", now)),
        {
          owner: "room-2",
          now,
          leaseMs: LEASE,
          room: { limit: 100, endpointRoom: { [endpointId]: 2 }, endpointLimit: 100 },
        },
        { deliverWithinMs: 86_400_000 },
      ),
    );
    expect(answer.recorded).toEqual([true, true, true]);
    const successors = queues.map((ids) => ids[1] as string);
    const rows = answer.claimed?.rows ?? [];
    expect(rows.length).toBe(2);
    expect(answer.claimed).toMatchObject({ owner: "room-2", claimedAt: now });
    expect(answer.claimed?.context.events.map((e) => e.id).sort()).toEqual(rows.map((d) => d.eventId).sort());
    expect(answer.unclaimed.length).toBe(1);
    expect([...rows.map((d) => d.id), ...answer.unclaimed.map((h) => h.id)].sort()).toEqual(
      successors.sort(),
    );
    for (const d of rows) {
      expect(await deliveryRow(server, d.id)).toMatchObject({ lease_owner: "room-2", attempt_count: 1 });
    }
    // The one beyond the room: the head of its queue, its lease given back as if never taken.
    const [left] = answer.unclaimed;
    expect(await deliveryRow(server, left?.id as string)).toMatchObject({
      status: "pending",
      lease_owner: null,
      lease_expires_at: null,
      attempt_count: 0,
    });
    expect((await claimById("hinted", [left?.id as string], now + 1)).map((d) => d.id)).toEqual([
      left?.id as string,
    ]);
  });

  test("event n+1 is claimable only once n is no longer pending (delivered or dead)", async () => {
    await drain();
    const [first, second, third] = await queue(3);
    const [one] = await claim("o1");
    expect(one?.id).toBe(first as string);
    expect(
      await complete(one as ClaimedDelivery, "o1", { kind: "delivered", at: Date.now(), latencyMs: 0 }, 200),
    ).toBe(true);
    const [two] = await claim("o2");
    expect(two?.id).toBe(second as string);
    expect(
      await complete(
        two as ClaimedDelivery,
        "o2",
        { kind: "dead", at: Date.now(), reason: "deadline_exceeded" },
        500,
      ),
    ).toBe(true);
    const [three] = await claim("o3");
    expect(three?.id).toBe(third as string);
  });

  test("a failed head scheduled for later holds back the rest of its queue, not other aggregates", async () => {
    await drain();
    const [first] = await queue(2);
    const [other] = await queue(1);
    const claimed = await claim("o1");
    const head = claimed.find((d) => d.id === first) as ClaimedDelivery;
    const now = Date.now();
    expect(await complete(head, "o1", { kind: "retry", at: now, nextAttemptAt: now + 10_000 }, 500)).toBe(
      true,
    );
    expect(claimed.map((d) => d.id)).toContain(other as string);
    // Sequence 2 is due but its predecessor is pending: nothing to take until the retry is due.
    expect(await claim("o2", now + 5_000)).toEqual([]);
    const [again] = await claim("o3", now + 10_000);
    expect(again).toMatchObject({ id: first, attemptCount: 2 });
  });

  test("an event scheduled with deliverAfter holds back the later events of its aggregate until it is sent", async () => {
    await drain();
    const aggregate = `scheduled/${crypto.randomUUID()}`;
    const deliverAfter = new Date(Date.now() + 60_000).toISOString();
    const events = await commitEvents(server, [
      { aggregate, deliverAfter, endpoints: [endpointId] },
      { aggregate, endpoints: [endpointId] },
    ]);
    const [scheduled, next] = events.map(onlyDelivery);
    expect(await claim("early")).toEqual([]);
    const [first] = await claim("on-time", Date.parse(deliverAfter));
    expect(first?.id).toBe(scheduled as string);
    await complete(
      first as ClaimedDelivery,
      "on-time",
      { kind: "delivered", at: Date.parse(deliverAfter), latencyMs: 0 },
      200,
    );
    expect((await claim("then", Date.parse(deliverAfter))).map((d) => d.id)).toEqual([next as string]);
  });

  test("not claimed: rows at a disabled endpoint, rows past their deadline, rows not yet due", async () => {
    await drain();
    const disabled = await newEndpoint();
    const [atDisabled] = await queue(1, disabled);
    expectStatus(await server.request("PATCH", `/v1/endpoints/${disabled}`, { disabled: true }), 200);
    const [late] = await queue(1);
    await exec(server, "UPDATE deliveries SET deliver_by = :past WHERE id = :id", {
      id: late as string,
      past: Date.now() - 1,
    });
    const [later] = await queue(1);
    await exec(server, "UPDATE deliveries SET next_attempt_at = :future WHERE id = :id", {
      id: later as string,
      future: Date.now() + 60_000,
    });
    expect(await claim("o1")).toEqual([]);

    expectStatus(await server.request("POST", `/v1/endpoints/${disabled}/enable`), 200);
    expect((await claim("o2")).map((d) => d.id)).toEqual([atDisabled as string]);
  });

  test("per-endpoint room and the overall limit bound a claim", async () => {
    await drain();
    for (let i = 0; i < 4; i++) await queue(1);
    expect(await claim("full", Date.now(), { endpointRoom: { [endpointId]: 0 } })).toEqual([]);
    expect(await claim("room-1", Date.now(), { endpointRoom: { [endpointId]: 1 } })).toHaveLength(1);
    expect(await claim("limit-1", Date.now(), { endpointLimit: 1 })).toHaveLength(1);
    expect(await claim("limit", Date.now(), { limit: 1 })).toHaveLength(1);
    expect(await claim("rest")).toHaveLength(1);
  });

  test("an endpoint with no room left does not starve the others, however long its backlog", async () => {
    await drain();
    const busy = await newEndpoint();
    // 12 older heads at a saturated endpoint, then one head elsewhere: a claim of 2 scans 8 rows.
    for (let i = 0; i < 12; i++) await queue(1, busy);
    await exec(
      server,
      "UPDATE deliveries SET next_attempt_at = next_attempt_at - 60000 WHERE endpoint_id = :busy",
      {
        busy,
      },
    );
    const [elsewhere] = await queue(1);
    const claimed = await claim("o", Date.now(), { limit: 2, endpointRoom: { [busy]: 0 } });
    expect(claimed.map((d) => d.id)).toEqual([elsewhere as string]);
  });

  describe("the completion fence", () => {
    test("a late finisher whose lease was taken over cannot overwrite the newer owner's result", async () => {
      await drain();
      const [id] = await queue(1);
      const [mine] = await claim("old");
      expect(mine?.id).toBe(id as string);
      // The old lease runs out (backdated) and another dispatcher claims the row.
      await exec(server, "UPDATE deliveries SET lease_expires_at = :past WHERE id = :id", {
        id: id as string,
        past: Date.now() - 1,
      });
      const [theirs] = await claim("new");
      expect(theirs).toMatchObject({ id, attemptCount: 2 });
      const now = Date.now();
      expect(
        await complete(
          theirs as ClaimedDelivery,
          "new",
          { kind: "retry", at: now, nextAttemptAt: now + 7_000 },
          500,
        ),
      ).toBe(true);

      expect(
        await complete(
          mine as ClaimedDelivery,
          "old",
          { kind: "delivered", at: Date.now(), latencyMs: 0 },
          200,
        ),
      ).toBe(false);
      const row = await deliveryRow(server, id as string);
      expect(row).toMatchObject({
        status: "pending",
        last_status_code: 500,
        next_attempt_at: now + 7_000,
        delivered_at: null,
        lease_owner: null,
      });
      // The refused attempt is still in the log: the receiver did get it.
      const attempts = await sql<{ status_code: number }>(
        server,
        "SELECT status_code FROM attempts WHERE delivery_id = :id ORDER BY pos",
        { id: id as string },
      );
      expect(attempts.map((a) => a.status_code)).toEqual([500, 200]);
    });

    test("a late failure cannot undo a newer owner's delivery, nor kill it", async () => {
      await drain();
      const [id] = await queue(1);
      const [mine] = await claim("old");
      const [theirs] = await claim("new", Date.now() + LEASE + 1);
      expect(theirs?.id).toBe(id as string);
      expect(
        await complete(
          theirs as ClaimedDelivery,
          "new",
          { kind: "delivered", at: Date.now(), latencyMs: 0 },
          204,
        ),
      ).toBe(true);
      const now = Date.now();
      expect(
        await complete(mine as ClaimedDelivery, "old", { kind: "retry", at: now, nextAttemptAt: now }, 500),
      ).toBe(false);
      expect(
        await complete(
          mine as ClaimedDelivery,
          "old",
          { kind: "dead", at: now, reason: "deadline_exceeded" },
          500,
        ),
      ).toBe(false);
      expect(await complete(mine as ClaimedDelivery, "old", { kind: "gone", at: now }, 410)).toBe(false);
      expect(await deliveryRow(server, id as string)).toMatchObject({
        status: "delivered",
        last_status_code: 204,
      });
      const endpoint = expectStatus(await server.request("GET", `/v1/endpoints/${endpointId}`), 200);
      expect(endpoint.disabled).toBe(false);
    });

    test("a finisher whose lease ran out but was not taken over still completes: the row is still its own", async () => {
      await drain();
      const [id] = await queue(1);
      const [mine] = await claim("slow");
      await exec(server, "UPDATE deliveries SET lease_expires_at = :past WHERE id = :id", {
        id: id as string,
        past: Date.now() - 1,
      });
      expect(
        await complete(
          mine as ClaimedDelivery,
          "slow",
          { kind: "delivered", at: Date.now(), latencyMs: 0 },
          200,
        ),
      ).toBe(true);
      expect((await deliveryRow(server, id as string)).status).toBe("delivered");
    });

    test("a completion after the endpoint was deleted is refused (the row is already dead)", async () => {
      await drain();
      const doomed = await newEndpoint();
      const [id] = await queue(1, doomed);
      const [mine] = await claim("o");
      expect(expectStatus(await server.request("DELETE", `/v1/endpoints/${doomed}`), 200)).toMatchObject({
        deadLettered: 1,
      });
      expect(
        await complete(
          mine as ClaimedDelivery,
          "o",
          { kind: "delivered", at: Date.now(), latencyMs: 0 },
          200,
        ),
      ).toBe(false);
      expect(await deliveryRow(server, id as string)).toMatchObject({
        status: "dead",
        dead_reason: "endpoint_deleted",
      });
    });
  });

  test("deadline expiry takes unleased pending rows past deliver_by, leaves live leases alone, and counts", async () => {
    await drain();
    const [idle] = await queue(1);
    const [leased] = await queue(1);
    const [fresh] = await queue(1);
    const now = Date.now();
    await claim("holder", now, { limit: 100 });
    await exec(
      server,
      "UPDATE deliveries SET lease_owner = NULL, lease_expires_at = NULL WHERE id IN (:a, :b)",
      {
        a: idle as string,
        b: fresh as string,
      },
    );
    await exec(server, "UPDATE deliveries SET deliver_by = :past WHERE id IN (:a, :b)", {
      a: idle as string,
      b: leased as string,
      past: now - 1,
    });
    const counter = async () =>
      (await sql<{ value: number }>(server, "SELECT value FROM counters WHERE name = 'deadline_exceeded'"))[0]
        ?.value ?? 0;
    const before = await counter();
    expect(await server.outboxd.db.writer.write(expireDeadlines(now))).toBe(1);
    expect(await deliveryRow(server, idle as string)).toMatchObject({
      status: "dead",
      dead_reason: "deadline_exceeded",
    });
    expect((await deliveryRow(server, leased as string)).status).toBe("pending");
    expect((await deliveryRow(server, fresh as string)).status).toBe("pending");
    expect(await counter()).toBe(before + 1);
    // Once the lease is over, the leased one expires too.
    expect(await server.outboxd.db.writer.write(expireDeadlines(now + LEASE))).toBe(1);
    expect((await deliveryRow(server, leased as string)).status).toBe("dead");
    expect(await counter()).toBe(before + 2);
  });

  test("retention prunes old delivered rows and their attempts, never pending or dead ones", async () => {
    await drain();
    const [delivered, pending, dead] = [...(await queue(1)), ...(await queue(1)), ...(await queue(1))];
    const claimed = await claim("o");
    const byId = new Map(claimed.map((d) => [d.id, d]));
    const at = Date.now();
    await complete(
      byId.get(delivered as string) as ClaimedDelivery,
      "o",
      { kind: "delivered", at, latencyMs: 0 },
      200,
    );
    await complete(
      byId.get(pending as string) as ClaimedDelivery,
      "o",
      { kind: "retry", at, nextAttemptAt: at },
      500,
    );
    await complete(
      byId.get(dead as string) as ClaimedDelivery,
      "o",
      { kind: "dead", at, reason: "deadline_exceeded" },
      500,
    );
    const pruned = await server.outboxd.db.writer.write(
      prune({ before: at + 1_000, now: at + 1_000 }, 10_000),
    );
    expect(pruned.deliveries).toBeGreaterThanOrEqual(1);
    const left = await sql<{ id: string }>(server, "SELECT id FROM deliveries WHERE id IN (:a, :b, :c)", {
      a: delivered as string,
      b: pending as string,
      c: dead as string,
    });
    expect(left.map((r) => r.id).sort()).toEqual([pending, dead].sort() as string[]);
    const attempts = await sql<{ delivery_id: string }>(
      server,
      "SELECT delivery_id FROM attempts WHERE delivery_id IN (:a, :b, :c)",
      { a: delivered as string, b: pending as string, c: dead as string },
    );
    expect(attempts.map((a) => a.delivery_id).sort()).toEqual([pending, dead].sort() as string[]);
  });

  test("a batch's success is recorded on its delivery row and kept out of attempts_delivery; the delivery's attempts list it as before, and retention prunes it", async () => {
    await drain();
    const [id, next] = await queue(2);
    const [first] = await claim("log-1");
    const at = Date.now();
    // A failure, then (claimed again) a success and, in the same batch, a late finisher of the
    // first claim (fenced: logged, not recorded on the row).
    const failed = await server.outboxd.db.writer.write(
      completeDeliveries([
        {
          attempt: { ...delivered(first as ClaimedDelivery, "log-1", at).attempt, statusCode: 500 },
          completion: { kind: "retry", at, nextAttemptAt: at },
        },
      ]),
    );
    expect(failed.recorded).toEqual([true]);
    const [again] = await claim("log-2", at + 1);
    expect(again?.id).toBe(id as string);
    const success = delivered(again as ClaimedDelivery, "log-2", at + 2);
    const late = delivered(first as ClaimedDelivery, "log-1", at + 3);
    const { recorded } = await server.outboxd.db.writer.write(
      completeDeliveries([
        { ...success, attempt: { ...success.attempt, responsePrefix: "ok", durationMs: 7 } },
        { ...late, attempt: { ...late.attempt, statusCode: 204 } },
      ]),
    );
    expect(recorded).toEqual([true, false]);
    const [row] = await sql<{ delivered_attempt: number; status: string }>(
      server,
      "SELECT delivered_attempt, status FROM deliveries WHERE id = :id",
      { id: id as string },
    );
    expect(row?.status).toBe("delivered");
    const logged = await sql<{ pos: number; status_code: number; on_delivery: number | null }>(
      server,
      "SELECT pos, status_code, on_delivery FROM attempts WHERE delivery_id = :id ORDER BY pos",
      { id: id as string },
    );
    expect(logged.map((a) => [a.status_code, a.on_delivery])).toEqual([
      [500, null],
      [200, 1],
      [204, null],
    ]);
    expect(row?.delivered_attempt).toBe(logged[1]?.pos as number);
    // Out of the index: what attempts_delivery holds of this delivery is the other two.
    const indexed = await sql<{ n: number }>(
      server,
      "SELECT count(*) AS n FROM attempts INDEXED BY attempts_delivery WHERE delivery_id = :id AND on_delivery IS NULL",
      { id: id as string },
    );
    expect(indexed[0]?.n).toBe(2);
    // The API lists all three, oldest first, as it always did.
    const listed = expectStatus(await server.request("GET", `/v1/deliveries/${id}/attempts`), 200);
    expect(
      (listed as { statusCode: number; durationMs: number; responsePrefix: string | null }[]).map((a) => [
        a.statusCode,
        a.durationMs,
        a.responsePrefix,
      ]),
    ).toEqual([
      [500, 2, null],
      [200, 7, "ok"],
      [204, 2, null],
    ]);
    // A delivery delivered one by one (completeDelivery) keeps its success in the index and is listed too.
    const [head] = await claim("log-3", at + 4);
    expect(head?.id).toBe(next as string);
    expect(
      await complete(head as ClaimedDelivery, "log-3", { kind: "delivered", at, latencyMs: 0 }, 201),
    ).toBe(true);
    const alone = expectStatus(await server.request("GET", `/v1/deliveries/${next}/attempts`), 200);
    expect((alone as { statusCode: number }[]).map((a) => a.statusCode)).toEqual([201]);
    // Retention takes every attempt of both, the one the row points at too, then the rows.
    await server.outboxd.db.writer.write(prune({ before: at + 10_000, now: at + 10_000 }, 10_000));
    const left = await sql<{ n: number }>(
      server,
      "SELECT (SELECT count(*) FROM attempts WHERE delivery_id IN (:a, :b)) + (SELECT count(*) FROM deliveries WHERE id IN (:a, :b)) AS n",
      { a: id as string, b: next as string },
    );
    expect(left[0]?.n).toBe(0);
  });

  test("a batch longer than one statement's list of rows (MAX_ROWS): every attempt logged once, every success pointed at its own, every next head promoted and leased", async () => {
    await drain();
    const queues = MAX_ROWS + 76;
    const endpoint = await newEndpoint();
    const aggregate = (i: number) => `long/${n}/${i}`;
    n += 1;
    // Two events per queue, committed queue by queue in commits of 100 events.
    const all = Array.from({ length: queues * 2 }, (_, i) => ({
      aggregate: aggregate(Math.floor(i / 2)),
      endpoints: [endpoint],
    }));
    const ids: string[] = [];
    for (let i = 0; i < all.length; i += 100)
      ids.push(...(await commitEvents(server, all.slice(i, i + 100))).map(onlyDelivery));
    const heads = await claim("long", Date.now(), { limit: queues * 2, endpointLimit: queues * 2 });
    expect(heads.length).toBe(queues);
    const at = Date.now();
    const { recorded, promoted, leased } = await server.outboxd.db.writer.write(
      completeDeliveries(
        heads.map((d) => delivered(d, "long", at)),
        { owner: "long-next", now: at, leaseMs: LEASE },
      ),
    );
    expect(recorded.every((r) => r)).toBe(true);
    expect(recorded.length).toBe(queues);
    // Each queue's second row is its head now, leased by the promotion.
    const seconds = ids.filter((_, i) => i % 2 === 1).sort();
    expect(promoted.map((p) => p.id).sort()).toEqual(seconds);
    expect(leased.map((p) => p.id).sort()).toEqual(seconds);
    // One attempt per delivery, and the delivered row points at its own.
    const [check] = await sql<{ rows: number; attempts: number; own: number }>(
      server,
      `SELECT count(*) AS rows,
         (SELECT count(*) FROM attempts a WHERE a.delivery_id IN (SELECT id FROM deliveries WHERE endpoint_id = :e)) AS attempts,
         sum((SELECT a.delivery_id = d.id AND a.on_delivery = 1 FROM attempts a WHERE a.pos = d.delivered_attempt)) AS own
       FROM deliveries d WHERE d.endpoint_id = :e AND d.status = 'delivered'`,
      { e: endpoint },
    );
    expect(check).toEqual({ rows: queues, attempts: queues, own: queues });
  });

  test("a success pointer whose position another delivery's attempt took again is not that delivery's: not listed, not pruned", async () => {
    await drain();
    const [pointing] = await queue(1);
    const [other] = await queue(1);
    const [first] = await claim("reuse-1");
    expect(first?.id).toBe(pointing as string);
    const at = Date.now();
    const { recorded } = await server.outboxd.db.writer.write(
      completeDeliveries([delivered(first as ClaimedDelivery, "reuse-1", at)]),
    );
    expect(recorded).toEqual([true]);
    const [row] = await sql<{ delivered_attempt: number }>(
      server,
      "SELECT delivered_attempt FROM deliveries WHERE id = :id",
      { id: pointing as string },
    );
    const pos = row?.delivered_attempt as number;
    // Its attempt pruned while the row stayed (its own delete fell past a prune's limit), then
    // the position, the newest, given again (no AUTOINCREMENT) to an attempt of a pending delivery.
    await exec(server, "DELETE FROM attempts WHERE pos = :pos", { pos });
    await exec(
      server,
      `INSERT INTO attempts (pos, delivery_id, started_at, duration_ms, status_code, error, response_prefix)
       VALUES (:pos, :other, :at, 1, 503, NULL, NULL)`,
      { pos, other: other as string, at },
    );
    const listed = expectStatus(await server.request("GET", `/v1/deliveries/${pointing}/attempts`), 200);
    expect(listed).toEqual([]);
    const theirs = expectStatus(await server.request("GET", `/v1/deliveries/${other}/attempts`), 200);
    expect((theirs as { statusCode: number }[]).map((a) => a.statusCode)).toEqual([503]);
    // Retention removes the delivered row and leaves the pending delivery's attempt.
    await server.outboxd.db.writer.write(prune({ before: at + 10_000, now: at + 10_000 }, 10_000));
    const left = await sql<{ rows: number; attempts: number }>(
      server,
      `SELECT (SELECT count(*) FROM deliveries WHERE id = :pointing) AS rows,
         (SELECT count(*) FROM attempts WHERE pos = :pos AND delivery_id = :other) AS attempts`,
      { pointing: pointing as string, other: other as string, pos },
    );
    expect(left[0]).toEqual({ rows: 0, attempts: 1 });
  });

  test("the scanning claim goes endpoint by endpoint through each one's ready range: a backlog nobody takes (a pull endpoint nobody polls) is never walked", async () => {
    await drain();
    const pull = expectStatus(await server.request("POST", "/v1/endpoints", { kind: "pull" }), 201).id;
    const old = Date.now() - 600_000;
    // 2,000 due pull heads, all older than the webhook's rows: a scan in due order meets them first.
    await exec(
      server,
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
       INSERT INTO deliveries (id, event_id, endpoint_id, aggregate, sequence, event_type, status,
         available_at, next_attempt_at, deliver_by, created_at, is_head)
       SELECT 'dlv_pull_' || i, 'evt_pull_' || i, :pull, 'p/' || i, 1, 't', 'pending', :old, :old + i, :later, :old, 1
       FROM n`,
      { pull, old, later: old + 1_200_000 },
    );
    const webhook = [...(await queue(1)), ...(await queue(1))];
    const now = Date.now() + 1;
    const request = {
      owner: "by-endpoint",
      now,
      leaseMs: LEASE,
      limit: 4,
      endpointRoom: {},
      endpointLimit: 4,
    };
    const step = claimDeliveries(request).next();
    const statement = step.value as { sql: string; args: Record<string, unknown> };
    // The plan, from a connection of this test's own (the server's reader prepares statements once).
    const own = new Database(join(server.dir, "outboxd.db"), { readonly: true });
    const plan = (
      own.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(statement.args) as { detail: string }[]
    ).map((row) => row.detail);
    own.close();
    expect(plan).toContain("SCAN o");
    expect(
      plan.some((d) => d.startsWith("SEARCH h USING INDEX deliveries_endpoint_ready (endpoint_id=?")),
    ).toBe(true);
    expect(plan.filter((d) => /^SCAN (d|h|deliveries)\b/.test(d))).toEqual([]);
    const claimed = await server.outboxd.db.writer.write(claimDeliveries(request));
    expect(claimed.map((d) => d.id).sort()).toEqual(webhook.sort());
    await exec(server, "DELETE FROM deliveries WHERE endpoint_id = :pull", { pull });
  });
});
