// The single writer. SQLite has one writer at a time anyway; queueing every write here instead
// of letting handlers open transactions gives group commit: the operations waiting in the
// queue share one transaction and one fsync, and one operation's failure undoes only its own
// work (batchOp says how: one savepoint per group when the operations can be made anew, else
// one each). A caller's promise settles only after the COMMIT that made its work durable (or
// failed).
import type { Driver } from "./driver.ts";
import { GroupChain } from "./group-chain.ts";
import { type Op, type Outcome, run, type Statement, writesTable } from "./op.ts";
import { isStorageFull } from "./storage-errors.ts";

interface Queued {
  op: Op<unknown>;
  /** Makes the operation anew, for a driver that may have to run it again (remote-writer.ts). */
  again: (() => Op<unknown>) | undefined;
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class Writer {
  readonly #driver: Driver;
  readonly #maxBatch: number;
  #queue: Queued[] = [];
  #draining: Promise<void> | null = null;
  /** Groups still running on a driver that overlaps them (Driver.nextGroup). */
  readonly #groups = new Set<Promise<void>>();
  #full = false;

  constructor(driver: Driver, maxBatch = 256) {
    this.#driver = driver;
    this.#maxBatch = maxBatch;
  }

  /**
   * Queues `op`. `durable: false` is for transactions that only change leases or attempt
   * outcomes, whose loss on power failure is harmless (a redelivery, which at-least-once
   * allows): a batch of only such operations commits without a sync of its own (DESIGN §1.8).
   * The WAL keeps order, so the next durable commit makes them durable too.
   *
   * Given a function that makes the operation, the driver may run it more than once (only one
   * run ever commits): the client driver then batches the whole group in a few round trips
   * (remote-writer.ts says what such an operation may and may not do).
   */
  write<T>(op: Op<T> | (() => Op<T>), options: { durable?: boolean } = {}): Promise<T> {
    const again = typeof op === "function" ? op : undefined;
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        op: again ? again() : (op as Op<T>),
        again,
        durable: options.durable ?? true,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#draining ??= this.#drain();
    });
  }

  /**
   * Whether the last write failed with SQLITE_FULL (storage-errors.ts): /readyz fails until a
   * write succeeds again.
   */
  get storageFull(): boolean {
    return this.#full;
  }

  /** Resolves once everything queued so far has been committed or failed. */
  async idle(): Promise<void> {
    while (this.#draining || this.#groups.size > 0) {
      if (this.#draining) await this.#draining;
      await Promise.all(this.#groups);
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        // Let the event loop run the requests that arrived meanwhile, so they join this batch.
        await new Promise((resolve) => setImmediate(resolve));
        const batch = this.#queue.splice(0, this.#maxBatch);
        const writeGroup = this.#driver.writeGroup?.bind(this.#driver);
        const grouped = writeGroup ? batch.filter((item) => item.again) : [];
        const rest = grouped.length > 0 ? batch.filter((item) => !item.again) : batch;
        if (rest.length > 0) {
          // Never beside a group still running (Driver.nextGroup): they may share a connection.
          if (this.#groups.size > 0) await Promise.all(this.#groups);
          await this.#transaction(rest);
        }
        if (writeGroup && grouped.length > 0) {
          const done = writeGroup(
            grouped.map((item) => ({ op: item.op, again: item.again as () => Op<unknown> })),
          ).then((outcomes) => this.#settle(grouped, outcomes));
          if (this.#driver.nextGroup) {
            // The next group may read while this one's writes are on their way (remote-writer.ts).
            this.#groups.add(done);
            void done.finally(() => this.#groups.delete(done));
            await this.#driver.nextGroup();
          } else {
            await done;
          }
        }
      }
    } finally {
      this.#draining = null;
    }
  }

  async #transaction(batch: Queued[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await this.#driver.transaction(batchOp(batch), {
        durable: batch.some((item) => item.durable),
      });
    } catch (error) {
      // BEGIN or COMMIT failed: nothing of this batch is durable, so every caller hears it.
      this.#full = isStorageFull(error);
      for (const item of batch) item.reject(error);
      return;
    }
    this.#settle(batch, outcomes);
  }

  #settle(batch: Queued[], outcomes: Outcome[]): void {
    let full = false;
    let wrote = false;
    batch.forEach((item, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) {
        wrote = true;
        item.resolve(outcome.value);
      } else {
        if (isStorageFull(outcome.error)) full = true;
        item.reject(outcome.error);
      }
    });
    if (full) this.#full = true;
    else if (wrote) this.#full = false;
  }
}

/**
 * The batch as one operation. Each operation's work must be undone alone if it fails, and only
 * its own: a savepoint around each operation does that, but SQLite then copies every page an
 * operation changes into the savepoint's journal, once per operation (in a replay of a group of
 * one-record commits, 90k of 305k instructions per commit). So the operations of the batch that
 * can be made anew (`again`, as every commit is) run together under one savepoint of their own,
 * before those that cannot, which run after them, each in its own savepoint (a pull lease or ack in
 * the batch no longer sends the commits beside it the slow way, and sees their deliveries: a stream
 * leases an event in its commit's own group instead of a group later). Under the one savepoint, an operation
 * that fails before writing anything is answered with its error and the others go on; one that
 * fails after writing undoes them all (ROLLBACK TO it), and they run again the careful way: the
 * operations before it made anew, each in its own savepoint, those that failed answered with the
 * errors they gave, those after it as they are. The savepoints are never released one by one
 * (COMMIT ends them all), which saves a statement each.
 *
 * Reads marked batchShared are answered once per batch, until a statement of the batch writes
 * the table they read. That is sound because every operation of a batch is acknowledged by the
 * same COMMIT: they are concurrent for their clients, so a commit that does not see an endpoint
 * created earlier in the same batch is indistinguishable from one ordered before it. It is not
 * sound across a write to that table: a commit after an endpoint's delete that still saw the
 * endpoint would write deliveries to it after the delete dead-lettered its deliveries,
 * so any write to the table drops the shared answer and the next read sees the write.
 */
function* batchOp(batch: Queued[]): Op<Outcome[]> {
  const remade = batch.filter((item) => item.again !== undefined);
  if (remade.length === batch.length) return yield* remadeOp(batch);
  if (remade.length < 2) {
    const { outcomes } = yield* runOperations(
      batch.map((item) => item.op),
      true,
    );
    return outcomes;
  }
  // Some cannot be made anew (a pull lease or ack, an admin write): the rest run first the cheaper
  // way, and those after them, each in its own savepoint (the batch's savepoint is done with by
  // then: nothing rolls back to it). All are answered by the same COMMIT, so running them in this
  // order is as good as the order they came in; this one lets a lease see the group's commits.
  const first = yield* remadeOp(remade);
  const once = batch.filter((item) => item.again === undefined);
  const { outcomes: second } = yield* runOperations(
    once.map((item) => item.op),
    true,
  );
  const answers = new Map<Queued, Outcome>();
  for (const [i, item] of remade.entries()) answers.set(item, first[i] as Outcome);
  for (const [i, item] of once.entries()) answers.set(item, second[i] as Outcome);
  return batch.map((item) => answers.get(item) as Outcome);
}

/** A batch of operations that can all be made anew (more than one), under one savepoint of its own. */
function* remadeOp(batch: Queued[]): Op<Outcome[]> {
  if (batch.length === 1) {
    const { outcomes } = yield* runOperations([(batch[0] as Queued).op], true);
    return outcomes;
  }
  yield* run("SAVEPOINT batch");
  const { outcomes: first, stopped } = yield* runOperations(
    batch.map((item) => item.op),
    false,
  );
  // Not "every operation has an outcome": the last one may be the one that failed after writing.
  if (!stopped) return first;
  // The last outcome is the failure of an operation that had written: undo the batch and run
  // it again. Operations that failed are answered as they were (those before it wrote nothing).
  const failed = first.length - 1;
  yield* run("ROLLBACK TO batch");
  const again = yield* runOperations(
    batch.map((item, i) => {
      const outcome = first[i];
      if (outcome && !outcome.ok) return outcome;
      return i < failed ? (item.again as () => Op<unknown>)() : item.op;
    }),
    true,
  );
  return again.outcomes;
}

/** A statement that may change the database (anything but a plain SELECT). */
function writes(statement: Statement): boolean {
  return statement.kind === "run" || !/^\s*SELECT\b/i.test(statement.sql);
}

/**
 * Runs the operations one after another in this transaction. With `savepoints`, each in its own,
 * a failing one rolled back to it; without, the run stops at the first operation that fails after
 * it wrote (its outcome last), for the caller to undo the batch. An outcome in place of an
 * operation is one already answered.
 */
function* runOperations(
  ops: (Op<unknown> | Outcome)[],
  savepoints: boolean,
): Op<{ outcomes: Outcome[]; stopped: boolean }> {
  const outcomes: Outcome[] = [];
  const shared = new SharedReads();
  const chain = new GroupChain();
  for (const op of ops) {
    if ("ok" in op) {
      outcomes.push(op);
      continue;
    }
    let savepoint = false;
    let wrote = false;
    const chainMark = chain.mark();
    try {
      let step = op.next();
      while (!step.done) {
        const statement = step.value;
        if (statement.kind === "prefetch") {
          // Only the remote write path uses the announcement; here each read runs when asked.
          step = op.next();
          continue;
        }
        if (savepoints && !savepoint) {
          yield* run("SAVEPOINT op");
          savepoint = true;
        }
        if (statement.kind === "chain") {
          // The ledger's entry, placed on the group's chain (group-chain.ts).
          wrote = true;
          try {
            yield* chain.append(statement);
          } catch (error) {
            step = op.throw(error);
            continue;
          }
          step = op.next();
          continue;
        }
        let result: unknown;
        try {
          result = shared.answer(statement);
          if (result === undefined) {
            if (!wrote && writes(statement)) wrote = true;
            result = yield statement;
            shared.remember(statement, result);
          }
        } catch (error) {
          step = op.throw(error);
          continue;
        }
        step = op.next(result);
      }
      outcomes.push({ ok: true, value: step.value });
    } catch (error) {
      outcomes.push({ ok: false, error });
      if (!savepoints && wrote) return { outcomes, stopped: true };
      if (savepoint) yield* run("ROLLBACK TO op");
      chain.restore(chainMark);
      // A shared answer read after this operation's own (now undone) writes would be wrong.
      if (wrote) shared.clear();
    }
  }
  return { outcomes, stopped: false };
}

/** The batchShared answers of one batch, each dropped when a statement writes its table. */
class SharedReads {
  readonly #answers = new Map<string, { table: string; rows: unknown }>();

  /** The shared answer to this statement, if it is a shared read already answered. */
  answer(statement: Statement): unknown {
    return statement.batchShared ? this.#answers.get(key(statement))?.rows : undefined;
  }

  clear(): void {
    this.#answers.clear();
  }

  /** After a statement ran: keep a shared read's answer, or forget those a write outdated. */
  remember(statement: Statement, result: unknown): void {
    if (statement.batchShared) {
      this.#answers.set(key(statement), { table: statement.batchShared.table, rows: result });
      return;
    }
    // A `run` that changed nothing (e.g. the throttled endpoint health update) outdates nothing.
    if (this.#answers.size === 0 || (statement.kind === "run" && result === 0)) return;
    for (const [k, { table }] of this.#answers) {
      if (writesTable(statement.sql, table)) this.#answers.delete(k);
    }
  }
}

function key(statement: Statement): string {
  return `${statement.sql}\u0000${JSON.stringify(statement.args)}`;
}
