// The single writer. SQLite has one writer at a time anyway; queueing every write here instead
// of letting handlers open transactions gives group commit: the operations waiting in the
// queue share one transaction and one fsync, each inside its own savepoint so that one
// operation's failure rolls back only its own work. A caller's promise settles only after
// the COMMIT that made its work durable (or failed).
import type { Driver } from "./driver.ts";
import { GroupChain } from "./group-chain.ts";
import { type Op, type Outcome, run, type Statement, writesTable } from "./op.ts";

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
  /** Committed transactions whose durability (and so their callers) is still awaited. */
  readonly #syncing = new Set<Promise<void>>();
  /** Groups still running on a driver that overlaps them (Driver.nextGroup). */
  readonly #groups = new Set<Promise<void>>();

  constructor(driver: Driver, maxBatch = 256) {
    this.#driver = driver;
    this.#maxBatch = maxBatch;
  }

  /**
   * Queues `op`. `durable: false` is for bookkeeping whose loss on power failure is harmless
   * (the dispatcher's claims and completions: a lost one means a redelivery, which
   * at-least-once allows): a batch of only such operations commits without an fsync of its
   * own. The WAL keeps order, so the next durable commit makes them durable too.
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

  /** Resolves once everything queued so far has been committed or failed. */
  async idle(): Promise<void> {
    while (this.#draining || this.#syncing.size > 0 || this.#groups.size > 0) {
      if (this.#draining) await this.#draining;
      await Promise.all(this.#syncing);
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
          const done = this.#transaction(rest);
          if (this.#driver.pipelined) {
            // Committed already; only its fsync is awaited (off the event loop). The next batch
            // may start now: its callers are told after these (the driver keeps the order).
            this.#syncing.add(done);
            void done.finally(() => this.#syncing.delete(done));
          } else {
            await done;
          }
        }
        if (writeGroup && grouped.length > 0) {
          const done = writeGroup(
            grouped.map((item) => ({ op: item.op, again: item.again as () => Op<unknown> })),
          ).then((outcomes) => settle(grouped, outcomes));
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
      for (const item of batch) item.reject(error);
      return;
    }
    settle(batch, outcomes);
  }
}

function settle(batch: Queued[], outcomes: Outcome[]): void {
  batch.forEach((item, i) => {
    const outcome = outcomes[i] as Outcome;
    if (outcome.ok) item.resolve(outcome.value);
    else item.reject(outcome.error);
  });
}

/**
 * The batch as one operation. Each queued operation gets a savepoint before its first statement,
 * and a failing one is rolled back to it; the savepoints are never released one by one (COMMIT
 * ends them all), which saves a statement per operation.
 *
 * Reads marked batchShared are answered once per batch, until a statement of the batch writes
 * the table they read. That is sound because every operation of a batch is acknowledged by the
 * same COMMIT: they are concurrent for their clients, so a commit that does not see an endpoint
 * created earlier in the same batch is indistinguishable from one ordered before it. It is not
 * sound across a write to that table: a commit after an endpoint's delete that still saw the
 * endpoint would write deliveries to it after the delete dead-lettered its deliveries (issue 19),
 * so any write to the table drops the shared answer and the next read sees the write.
 */
function* batchOp(batch: Queued[]): Op<Outcome[]> {
  const outcomes: Outcome[] = [];
  const shared = new SharedReads();
  const chain = new GroupChain();
  for (const item of batch) {
    let savepoint = false;
    const chainMark = chain.mark();
    try {
      let step = item.op.next();
      while (!step.done) {
        const statement = step.value;
        if (statement.kind === "prefetch") {
          // Only the remote write path uses the announcement; here each read runs when asked.
          step = item.op.next();
          continue;
        }
        if (!savepoint) {
          yield* run("SAVEPOINT op");
          savepoint = true;
        }
        if (statement.kind === "chain") {
          // The ledger's entry, placed on the group's chain (group-chain.ts).
          try {
            yield* chain.append(statement);
          } catch (error) {
            step = item.op.throw(error);
            continue;
          }
          step = item.op.next();
          continue;
        }
        let result: unknown;
        try {
          result = shared.answer(statement);
          if (result === undefined) {
            result = yield statement;
            shared.remember(statement, result);
          }
        } catch (error) {
          step = item.op.throw(error);
          continue;
        }
        step = item.op.next(result);
      }
      outcomes.push({ ok: true, value: step.value });
    } catch (error) {
      if (savepoint) yield* run("ROLLBACK TO op");
      chain.restore(chainMark);
      // A shared answer read after this operation's own (now undone) writes would be wrong.
      shared.clear();
      outcomes.push({ ok: false, error });
    }
  }
  return outcomes;
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
