// Property-style: endpoint creates, pattern changes and deletes mixed at random
// into group commits of fanning-out and explicitly addressed commits. Everything of one run is
// queued before the writer drains, so it shares one batch (one transaction, one shared endpoint
// read). After each run, no pending delivery may point at an endpoint that does not exist, and
// every delivery to a deleted endpoint is dead with `endpoint_deleted`.
// Seeded: OUTBOXD_FUZZ_SEED=<n> replays a run.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { commitOp } from "../../src/commit/commit-op.ts";
import { all } from "../../src/db/op.ts";
import { createEndpoint, deleteEndpoint, updateEndpoint } from "../../src/endpoints/endpoints.ts";
import { suiteDatabase } from "../helpers/database.ts";

const TYPES = ["order.created", "order.paid", "user.created"];
const PATTERNS = [["*"], ["order.*"], ["user.created"], ["order.paid"]];
const POOL = 4;

type Action =
  | { kind: "create"; patterns: number }
  | { kind: "delete"; endpoint: number }
  | { kind: "repattern"; endpoint: number; patterns: number }
  | { kind: "fanOut"; type: number }
  | { kind: "explicit"; endpoint: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), patterns: fc.nat(PATTERNS.length - 1) }),
  fc.record({ kind: fc.constant("delete" as const), endpoint: fc.nat(POOL - 1) }),
  fc.record({
    kind: fc.constant("repattern" as const),
    endpoint: fc.nat(POOL - 1),
    patterns: fc.nat(PATTERNS.length - 1),
  }),
  fc.record({ kind: fc.constant("fanOut" as const), type: fc.nat(TYPES.length - 1) }),
  fc.record({ kind: fc.constant("explicit" as const), endpoint: fc.nat(POOL - 1) }),
);

describe("endpoint writes inside group commits", () => {
  const database = suiteDatabase();
  let n = 0;
  /** Each run's aggregates carry its number, so a run is checked on its own rows. */
  let run = 0;

  function commit(type: string, endpoints: string[] | undefined) {
    n += 1;
    const now = Date.now();
    return commitOp({
      by: { tokenId: "tok_test", tokenName: "test" },
      records: [],
      events: [
        {
          id: undefined,
          type,
          aggregate: `run${run}/${n % 7}`,
          payload: "{}",
          deliverAfter: null,
          deliverBy: now + 3_600_000,
          endpoints,
        },
      ],
      idempotency: undefined,
      traceparent: undefined,
      conflictStatus: 409,
      maxDeliveries: 10_000,
      now,
    });
  }

  test("no pending delivery points at a missing endpoint, whatever the mix", async () => {
    const seed = Number(process.env.OUTBOXD_FUZZ_SEED ?? Date.now() % 1_000_000);
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 40 }), async (actions) => {
        run += 1;
        const now = Date.now();
        const pool: string[] = [];
        for (let i = 0; i < POOL; i++) {
          const created = await database().writer.write(
            createEndpoint(
              { url: "http://127.0.0.1:9/", eventTypes: ["*"], description: null, sealedSecrets: "[]" },
              now,
            ),
          );
          pool.push(created.id);
        }
        const id = (i: number) => pool[i] as string;
        // Queued in one go (no await in between): the writer runs them as one group commit.
        const perform = (a: Action): Promise<unknown> => {
          switch (a.kind) {
            case "create":
              return database().writer.write(
                createEndpoint(
                  {
                    url: "http://127.0.0.1:9/new",
                    eventTypes: PATTERNS[a.patterns] as string[],
                    description: null,
                    sealedSecrets: "[]",
                  },
                  now,
                ),
              );
            case "delete":
              return database().writer.write(deleteEndpoint(id(a.endpoint), now));
            case "repattern":
              return database().writer.write(
                updateEndpoint(id(a.endpoint), { eventTypes: PATTERNS[a.patterns] as string[] }, now),
              );
            case "fanOut":
              return database().writer.write(commit(TYPES[a.type] as string, undefined));
            case "explicit":
              return database().writer.write(commit("order.created", [id(a.endpoint)]));
          }
        };
        const writes = actions.map(perform);
        const outcomes = await Promise.allSettled(writes);
        // The only failure allowed: an explicit commit naming an endpoint already deleted.
        outcomes.forEach((outcome, i) => {
          if (outcome.status === "rejected") {
            // The 422 names the endpoint's place in the request.
            expect(`${actions[i]?.kind}: ${String(outcome.reason)}`).toMatch(
              /^explicit: .*\/events\/0\/endpoints\/0/,
            );
          }
        });
        const orphans = await database().driver.read(
          all(
            `SELECT d.id, d.status, d.dead_reason AS reason FROM deliveries d
             WHERE d.aggregate LIKE :run AND NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id)
               AND (d.status <> 'dead' OR d.dead_reason <> 'endpoint_deleted')`,
            { run: `run${run}/%` },
          ),
        );
        expect(orphans).toEqual([]);
      }),
      { seed, numRuns: 60 },
    );
  }, 60_000);
});
