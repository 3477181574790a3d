// Named writes for the tests (test servers' own writes, e.g. backdating rows): the main thread
// imports them, and the writer thread loads them too (DatabaseConfig.writerModules, set by
// test/helpers/server.ts).
import { type Args, get, type Op, run } from "../../src/db/op.ts";
import { defineWrite } from "../../src/db/writer-ops.ts";
import { recordDelivered } from "../../src/deliveries/counters.ts";
import { invalidField } from "../../src/lib/problem.ts";

export const TEST_WRITES = new URL("./test-writes.ts", import.meta.url).href;

/** Runs one statement as a write of its own. */
export const sqlWrite = defineWrite("test.sql", (text: string, args: Args) => run(text, args), {
  again: false,
});

/** Records a delivery as delivered at `at`, `latencyMs` after it became due, with its count (history). */
export const deliveredAtWrite = defineWrite(
  "test.deliveredAt",
  function* (id: string, at: number, latencyMs: number): Op<string | undefined> {
    yield* run(
      "UPDATE deliveries SET status = 'delivered', delivered_at = :at, available_at = :available WHERE id = :id",
      { id, at, available: at - latencyMs },
    );
    const row = yield* get<{ endpointId: string }>(
      "SELECT endpoint_id AS endpointId FROM deliveries WHERE id = :id",
      {
        id,
      },
    );
    yield* recordDelivered(row?.endpointId ?? "", at, latencyMs);
    return row?.endpointId;
  },
  { again: false },
);

/** The journal mode and synchronous level of the connection that runs it (the writer's). */
export const pragmasWrite = defineWrite(
  "test.pragmas",
  function* (): Op<{ journal: string; synchronous: number }> {
    const journal = (yield* get<{ journal_mode: string }>("PRAGMA journal_mode"))?.journal_mode ?? "";
    const synchronous = (yield* get<{ synchronous: number }>("PRAGMA synchronous"))?.synchronous ?? -1;
    return { journal: journal.toLowerCase(), synchronous: Number(synchronous) };
  },
  { again: false },
);

/** Refuses with a 422 naming a field (a Problem, as operations throw them), after writing a row. */
export const problemWrite = defineWrite(
  "test.problem",
  function* (): Op<void> {
    yield* run("INSERT INTO scratch (k) VALUES ('problem')");
    throw invalidField("/records/0/id", "is refused by the test");
  },
  { again: false },
);
