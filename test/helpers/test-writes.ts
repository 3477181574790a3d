// Named writes for the tests, in both modes of the writer (test/db/writer-thread.test.ts; test
// servers' own writes, e.g. backdating rows): the main thread imports them, and the writer thread
// loads them too (DatabaseConfig.writerModules, set by test/helpers/server.ts).
import { type Args, get, type Op, run } from "../../src/db/op.ts";
import { defineWrite } from "../../src/db/writer-ops.ts";
import { recordDelivered } from "../../src/deliveries/counters.ts";
import { invalidField } from "../../src/lib/problem.ts";

export const TEST_WRITES = new URL("./test-writes.ts", import.meta.url).href;

function* count(): Op<number> {
  return (yield* get<{ n: number }>("SELECT count(*) AS n FROM scratch"))?.n ?? 0;
}

/** Inserts the keys in order, then fails with `failure` if given; answers the rows it sees. */
function* insertAll(keys: string[], failure: string | null): Op<number> {
  for (const k of keys) yield* run("INSERT INTO scratch (k, v) VALUES (:k, 1)", { k });
  if (failure !== null) throw new Error(failure);
  return yield* count();
}

export const createScratchWrite = defineWrite(
  "test.createScratch",
  () => run("CREATE TABLE scratch (k TEXT PRIMARY KEY, v INTEGER)"),
  { again: false },
);
export const insertWrite = defineWrite("test.insert", insertAll, { again: false });

/**
 * A plain write (JSON data in and out: it crosses to the writer thread as text): inserts the keys,
 * answers the rows it sees with the note it was given, as it arrived.
 */
export const plainInsertWrite = defineWrite(
  "test.plainInsert",
  function* (keys: string[], note: { label: string; missing?: string; nested: number[] }): Op<unknown> {
    const rows = yield* insertAll(keys, null);
    return { rows, note };
  },
  { again: true, plain: true },
);
export const insertAgainWrite = defineWrite("test.insertAgain", insertAll, { again: true });

/** Writes a row, then refuses with a 422 naming a field (a Problem, as operations throw them). */
export const problemWrite = defineWrite(
  "test.problem",
  function* (): Op<void> {
    yield* run("INSERT INTO scratch (k, v) VALUES ('problem', 1)");
    throw invalidField("/records/0/id", "is refused by the test");
  },
  { again: false },
);

export const pragmasWrite = defineWrite(
  "test.pragmas",
  function* (): Op<{ journal: string; synchronous: number }> {
    const journal = (yield* get<{ journal_mode: string }>("PRAGMA journal_mode"))?.journal_mode ?? "";
    const synchronous = (yield* get<{ synchronous: number }>("PRAGMA synchronous"))?.synchronous ?? -1;
    return { journal: journal.toLowerCase(), synchronous: Number(synchronous) };
  },
  { again: false },
);

/** Holds the thread that runs it until `gate[0]` is set (Atomics.notify), then answers the rows it sees. */
export const heldWrite = defineWrite(
  "test.held",
  function* (gate: Int32Array): Op<number> {
    Atomics.wait(gate, 0, 0, 30_000);
    return yield* count();
  },
  { again: false },
);

/** Ends the thread that runs it: on the writer thread, as if it died (never run on the main thread). */
export const endThreadWrite = defineWrite(
  "test.endThread",
  function* (): Op<void> {
    yield* get("SELECT 1");
    process.exit(3);
  },
  { again: false },
);

/** One statement (tests backdate rows, make them due, insert what they need). */
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
