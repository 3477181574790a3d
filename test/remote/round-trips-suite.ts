// The remote write path's round trips, counted through the simulated network
// (test/helpers/network.ts): a group commit, a group of claims and a group of completions each
// cost the same few requests whatever the group's size (at most 4 per group commit).
// Run through @libsql/client's HTTP client against a real libSQL server (sqld on 127.0.0.1,
// round-trips-sqld.test.ts), where the batches' errors are the server's own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { type CommitInput, type CommitOutcome, commitOp } from "../../src/commit/commit-op.ts";
import { loadConfig } from "../../src/config.ts";
import { argsOf } from "../../src/db/client-driver.ts";
import { migrate } from "../../src/db/migrate.ts";
import { all, get, type Op, runOp } from "../../src/db/op.ts";
import { type Database, openDatabase } from "../../src/db/open.ts";
import { answerOf } from "../../src/db/remote-writer.ts";
import { claimDeliveries } from "../../src/deliveries/claim.ts";
import { completeDeliveries, completeDelivery } from "../../src/deliveries/complete.ts";
import { listAttempts } from "../../src/deliveries/read.ts";
import { createEndpoint } from "../../src/endpoints/endpoints.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { commitInput } from "../helpers/commit-input.ts";
import { installNetwork, type Network } from "../helpers/network.ts";
import { tempDir } from "../helpers/server.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";
import { writeOnOwnConnection } from "../helpers/sqlite.ts";

const SIZES = [1, 8, 64];

/** `file`: @libsql/client on the database file; `sqld`: its HTTP client and a real libSQL server. */
export function roundTripTests(backend: "file" | "sqld"): void {
  let network: Network;
  let db: Database;
  let endpointId: string;
  let file = "";
  let server: Sqld | null = null;

  beforeAll(async () => {
    network = installNetwork({ delayMs: 0 });
    file = join(tempDir("outboxd-rtt-"), "o.db");
    if (backend === "sqld") server = await startSqld();
    const url = server ? server.url : `file:${file}`;
    db = await openDatabase(loadConfig({ OUTBOXD_DATABASE_URL: url }));
    await db.writer.write(migrate());
    const endpoint = await db.writer.write(
      createEndpoint(
        { url: "https://example.com/hook", eventTypes: [], description: null, sealedSecrets: "[]" },
        Date.now(),
      ),
    );
    endpointId = endpoint.id;
  });

  afterAll(async () => {
    await db.close();
    await server?.stop();
    network.uninstall();
  });

  /**
   * An operation committed by another machine: on a connection of the test's own, outside the
   * simulated network (on a file, the copy of SQLite that holds it in this process: src/db/sqlite.ts).
   */
  async function writeElsewhere(op: Op<unknown>): Promise<void> {
    if (!server) {
      writeOnOwnConnection(file, op);
      return;
    }
    const client = createClient({ url: server.url, intMode: "number" });
    try {
      const tx = await client.transaction("write");
      await runOp(op, async (statement) =>
        answerOf(statement, await tx.execute({ sql: statement.sql, args: argsOf(statement) })),
      );
      await tx.commit();
    } finally {
      client.close();
    }
  }

  let serial = 0;
  function commit(options: { key?: boolean; events?: number } = {}): CommitInput {
    serial += 1;
    return commitInput(`r${serial}`, {
      data: JSON.stringify({ n: serial }),
      ...(options.events === undefined ? {} : { events: options.events }),
      idempotency: options.key ? { key: `k${serial}`, requestHash: "h" } : undefined,
    });
  }

  /** Queues all `ops` before the Writer's next turn, so they form one group; returns the requests it cost. */
  async function group<T>(
    ops: (() => Generator<unknown, T, unknown>)[],
  ): Promise<{ requests: number; results: T[] }> {
    await db.writer.idle();
    network.reset();
    const results = await Promise.all(ops.map((op) => db.writer.write(op as never) as Promise<T>));
    return { requests: network.total(), results };
  }

  describe("round trips per group on the remote write path", () => {
    test.each(SIZES)(
      // The ledger's head (DESIGN §13) is read once per group with the group's other reads, and
      // each commit's entry is built on the one before it as the write batch is.
      "a group commit of %i commits (idempotency keys, two events each, the ledger's chain): their reads in 1 request that takes the write lock, their writes with COMMIT in 1",
      async (n) => {
        const { requests, results } = await group(
          Array.from({ length: n }, () => {
            const input = commit({ key: true, events: 2 });
            return () => commitOp(input);
          }),
        );
        expect(results).toHaveLength(n);
        expect(network.counts["tx-statement"]).toBe(2);
        expect(network.counts["tx-end"]).toBe(0);
        expect(requests).toBe(2);
        expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true });
      },
    );

    test.each(SIZES)("a group of %i claims: 1 request", async (n) => {
      // n dispatchers' claims in one group (one process has one at a time; the bound holds anyway).
      await group(Array.from({ length: 4 }, () => () => commitOp(commit())));
      const now = Date.now();
      const { requests } = await group(
        Array.from(
          { length: n },
          (_, i) => () =>
            claimDeliveries({
              owner: `o${i}`,
              now,
              leaseMs: 60_000,
              limit: 1,
              endpointRoom: {},
              endpointLimit: 8,
            }),
        ),
      );
      expect(requests).toBe(1);
    });

    // Completions answer each write's row count with the count last seen for it, checked in the
    // batch: a first completion (a new minute bucket) learns them on the general path.
    test.each(SIZES)("a group of %i completions: 1 request once the counts are known", async (n) => {
      await deliver(2);
      const { requests, results } = await deliver(n);
      expect(results.every((recorded) => recorded === true)).toBe(true);
      expect(requests).toBe(1);
    });
  });

  /** The same minute for every completion: a new minute bucket would cost the general path once. */
  const AT = Date.now();

  async function deliver(n: number) {
    await group(Array.from({ length: n }, () => () => commitOp(commit())));
    const claimed = (
      await group([
        () =>
          claimDeliveries({
            owner: "c",
            now: Date.now() + 1000,
            leaseMs: 60_000,
            limit: n,
            endpointRoom: {},
            endpointLimit: 1000,
          }),
      ])
    ).results[0] as { id: string; aggregate: string }[];
    expect(claimed.length).toBe(n);
    return group(
      claimed.map(
        (d) => () =>
          completeDelivery(
            {
              deliveryId: d.id,
              owner: "c",
              endpointId,
              startedAt: AT,
              durationMs: 1,
              statusCode: 200,
              error: null,
              responsePrefix: null,
            },
            { kind: "delivered", at: AT + 2, latencyMs: 1 },
          ),
      ),
    );
  }

  describe("guards on the remote write path", () => {
    /** Another machine's commit to the same record, on a connection of its own. */
    async function elsewhere(id: string): Promise<void> {
      await writeElsewhere(commitOp({ ...commit(), records: [record(id, undefined)], events: eventsOf(id) }));
    }

    function record(id: string, expectedVersion: number | undefined) {
      return { collection: "orders", id, expectedVersion, data: "{}" };
    }

    function eventsOf(id: string) {
      return [{ ...(commit().events[0] as CommitInput["events"][number]), aggregate: `orders/${id}` }];
    }

    test("another machine's commit before the group's reads: they see it (version, sequence, the chain's head)", async () => {
      await db.writer.write(() =>
        commitOp({ ...commit(), records: [record("g1", undefined)], events: eventsOf("g1") }),
      );
      await elsewhere("g1");
      const input = { ...commit(), records: [record("g1", undefined)], events: eventsOf("g1") };
      const outcome = await db.writer.write(() => commitOp(input));
      expect(outcome.result.records[0]?.version).toBe(3);
      expect(outcome.result.events[0]?.sequence).toBe(3);
      expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true });
    });

    test("a client's expected version is judged on what another machine committed: 409 only when it is really stale", async () => {
      await db.writer.write(() => commitOp({ ...commit(), records: [record("g2", undefined)], events: [] }));
      await elsewhere("g2");
      const stale = { ...commit(), records: [record("g2", 1)], events: [] };
      await expect(db.writer.write(() => commitOp(stale))).rejects.toMatchObject({ status: 409 });
      const fresh = { ...commit(), records: [record("g2", 2)], events: [] };
      expect((await db.writer.write(() => commitOp(fresh))).result.records[0]?.version).toBe(3);
    });

    test("a completion the fence refuses answers false and changes nothing but the attempt log", async () => {
      await group([() => commitOp(commit())]);
      const [claimed] = (
        await group([
          () =>
            claimDeliveries({
              owner: "first",
              now: Date.now() + 1000,
              leaseMs: 60_000,
              limit: 1,
              endpointRoom: {},
              endpointLimit: 1000,
            }),
        ])
      ).results[0] as { id: string; aggregate: string }[];
      if (!claimed) throw new Error("nothing claimed");
      const recorded = await db.writer.write(() =>
        completeDelivery(
          {
            deliveryId: claimed.id,
            owner: "someone else",
            endpointId,
            startedAt: AT,
            durationMs: 1,
            statusCode: 200,
            error: null,
            responsePrefix: null,
          },
          { kind: "delivered", at: AT + 2, latencyMs: 1 },
        ),
      );
      expect(recorded).toBe(false);
      const row = await db.driver.read(
        get<{ status: string; leaseOwner: string }>(
          "SELECT status, lease_owner AS leaseOwner FROM deliveries WHERE id = :id",
          { id: claimed.id },
        ),
      );
      expect(row).toEqual({ status: "pending", leaseOwner: "first" });
    });

    test("a batch of outcomes: each success recorded on its row (delivered_attempt) and listed with the delivery's attempts", async () => {
      await group([() => commitOp(commit()), () => commitOp(commit())]);
      const claimed = (
        await group([
          () =>
            claimDeliveries({
              owner: "batch",
              now: Date.now() + 1000,
              leaseMs: 60_000,
              limit: 2,
              endpointRoom: {},
              endpointLimit: 1000,
            }),
        ])
      ).results[0] as { id: string; aggregate: string; sequence: number }[];
      expect(claimed.length).toBe(2);
      const attempt = (d: { id: string }, owner: string, statusCode: number) => ({
        deliveryId: d.id,
        owner,
        endpointId,
        startedAt: AT,
        durationMs: statusCode,
        statusCode,
        error: null,
        responsePrefix: null,
      });
      const [a, b] = [claimed[0], claimed[1]] as [{ id: string }, { id: string }];
      const { results } = await group([
        () =>
          completeDeliveries([
            // b's late finisher of another claim first: logged, refused, indexed.
            {
              attempt: attempt(b, "someone else", 202),
              completion: { kind: "delivered", at: AT + 2, latencyMs: 1 },
            },
            {
              attempt: attempt(a, "batch", 200),
              completion: { kind: "delivered", at: AT + 2, latencyMs: 1 },
            },
            {
              attempt: attempt(b, "batch", 201),
              completion: { kind: "delivered", at: AT + 2, latencyMs: 1 },
            },
          ]),
      ]);
      expect(results[0]?.recorded).toEqual([false, true, true]);
      for (const [d, codes] of [
        [a, [200]],
        [b, [202, 201]],
      ] as const) {
        const listed = await db.driver.read(listAttempts(d.id));
        expect(listed.map((x) => x.statusCode)).toEqual([...codes]);
        const row = await db.driver.read(
          get<{ onDelivery: number; statusCode: number }>(
            `SELECT a.on_delivery AS onDelivery, a.status_code AS statusCode
             FROM deliveries d JOIN attempts a ON a.pos = d.delivered_attempt WHERE d.id = :id`,
            { id: d.id },
          ),
        );
        expect(row).toEqual({ onDelivery: 1, statusCode: codes.at(-1) as number });
      }
    });

    test("a group commit with 1,100 endpoints (each guarded as read) costs what any group commit costs", async () => {
      await group(
        Array.from(
          { length: 150 },
          (_, i) => () =>
            createEndpoint(
              {
                url: `https://example.com/many/${i}`,
                eventTypes: ["none.*"],
                description: null,
                sealedSecrets: "[]",
              },
              Date.now(),
            ),
        ),
      );
      const { requests, results } = await group(
        Array.from({ length: 8 }, () => {
          const input = commit();
          return () => commitOp(input);
        }),
      );
      expect(results).toHaveLength(8);
      expect(requests).toBe(2);
    });
  });

  test("a read outside the write queue is one request, and answers rows by column name", async () => {
    await db.writer.idle();
    network.reset();
    const rows = await db.driver.read(
      all("SELECT id, url FROM endpoints WHERE id = :id", { id: endpointId }),
    );
    expect(rows).toEqual([{ id: endpointId, url: "https://example.com/hook" }]);
    expect(network.total()).toBe(1);
    // On a server, outboxd's batcher carries it (a read batch), not @libsql/client's execute.
    expect(network.counts[backend === "sqld" ? "read-batch" : "execute"]).toBe(1);
  });

  describe("groups under the write lock", () => {
    /** A commit on another machine (its own connection), which chains. */
    async function elsewhere(): Promise<void> {
      await writeElsewhere(commitOp(commit()));
    }

    test("one group at a time: the next group's reads go once the group before has been answered", async () => {
      await elsewhere();
      await db.writer.idle();
      network.reset();
      const four = () =>
        Promise.all(Array.from({ length: 4 }, () => db.writer.write(() => commitOp(commit()))));
      let later: Promise<CommitOutcome[]> | null = null;
      // Queued as the first group's reads leave: the next group.
      network.beforeNext("tx-statement", () => {
        later = four();
      });
      const outcomes = [...(await four()), ...(await (later as unknown as Promise<CommitOutcome[]>))];
      expect(outcomes.map((o) => o.result.records[0]?.version)).toEqual(Array(8).fill(1));
      // Two groups of 2 requests each, the second's reads sent after the first's batch was answered.
      const turns = network.trace.filter((entry) => entry.startsWith("tx-statement"));
      expect(turns).toEqual(Array(4).fill(["tx-statement sent", "tx-statement answered"]).flat());
      expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true });
    });

    /** Commits of this many records stored, and of events (a commit is stored whole or not at all). */
    async function stored(inputs: CommitInput[]): Promise<{ records: number; events: number }> {
      let records = 0;
      let events = 0;
      for (const input of inputs) {
        const id = input.records[0]?.id as string;
        const count = (sql: string, args: Record<string, string>) =>
          db.driver.read(get<{ n: number }>(sql, args)).then((row) => row?.n ?? 0);
        records += await count("SELECT count(*) AS n FROM records WHERE collection = 'orders' AND id = :id", {
          id,
        });
        events += await count("SELECT count(*) AS n FROM events WHERE aggregate = :aggregate", {
          aggregate: `orders/${id}`,
        });
      }
      return { records, events };
    }

    test.each([
      ["its reads (BEGIN with them)", "before"],
      ["its reads (BEGIN with them)", "after"],
      ["its batch with COMMIT", "before"],
      ["its batch with COMMIT", "after"],
    ] as const)(
      "a group under the write lock that loses %s %s reaching the database: 503 for each commit, all or nothing, the lock released",
      async (what, when) => {
        await elsewhere();
        await db.writer.idle();
        network.reset();
        if (what === "its batch with COMMIT") {
          network.afterNext("tx-statement", () => network.failNext("tx-statement", when));
        } else network.failNext("tx-statement", when);
        const inputs = Array.from({ length: 4 }, () => commit());
        const outcomes = await Promise.allSettled(
          inputs.map((input) => db.writer.write(() => commitOp(input))),
        );
        expect(network.counts["tx-statement"]).toBe(what === "its batch with COMMIT" ? 2 : 1);
        for (const outcome of outcomes) {
          expect(outcome.status).toBe("rejected");
          expect((outcome as PromiseRejectedResult).reason).toMatchObject({ status: 503 });
        }
        // Only a batch with COMMIT that reached the database wrote anything: all of it.
        const committed = what === "its batch with COMMIT" && when === "after" ? 4 : 0;
        expect(await stored(inputs)).toEqual({ records: committed, events: committed });
        // The write lock was released at once (a stream left holding it would keep the next group
        // waiting until the server expires it, never on a file).
        const next = db.writer.write(() => commitOp(commit()));
        const released = await Promise.race([next.then(() => true), Bun.sleep(5_000).then(() => false)]);
        expect(released).toBe(true);
        expect(await db.driver.read(verifyLedger())).toMatchObject({ ok: true });
      },
    );
  });
}
