// Completions in batches. A send's slot is free as soon as the receiver has answered; its
// outcome waits here and is written with every other outcome that arrived meanwhile, in one
// writer operation, while the next sends are already under way. Fencing is unchanged: each row
// changes only while this claim's lease holds it. Nothing is dropped: a batch whose write fails
// is tried again (after a pause) until it is written or its leases have run out, after which
// the rows are claimed again anyway (at least once).

import type { CompletionItem } from "../deliveries/complete.ts";
import type { Logger } from "../ops/log.ts";

/** An outcome waiting to be written: a CompletionItem as it is (no copy per outcome for the write), and more. */
export interface PendingCompletion<T> extends CompletionItem {
  /** Until when the claim's lease holds the row: after that a retry of the write is pointless. */
  leaseUntil: number;
  /** What the caller wants back with the result. */
  context: T;
}

export interface CompletionQueueDeps<T> {
  /** Writes a batch; returns, per item, whether the fence let it change the row. */
  write(items: PendingCompletion<T>[]): Promise<boolean[]>;
  /** After a batch was written: each item and whether it was recorded. */
  written(items: PendingCompletion<T>[], recorded: boolean[]): void;
  /**
   * Whether outcomes at these endpoints may wait to be written with more: each of them has sends
   * lined up, so the successors these rows would promote would wait behind those anyway. Absent:
   * never.
   */
  hold?(endpointIds: Iterable<string>): boolean;
  logger: Logger;
  clock(): number;
}

/** At most this many outcomes per write: a batch is one savepoint in a commit group. */
const MAX_BATCH = 512;
const RETRY_PAUSE_MS = 200;
/**
 * While the dispatcher has sends lined up at their endpoints (`hold`), outcomes wait until this many are queued, or
 * the first of them has waited HOLD_MS: a batch's statements and its transaction cost about the
 * same for 8 rows as for 64, so larger batches cut the SQL time per delivery (docs/benchmarks.md,
 * "Outcomes held for a batch"). Slots are not held: a send's slot is free at the answer.
 */
export const HOLD_BATCH = 64;
export const HOLD_MS = 8;

export class CompletionQueue<T> {
  readonly #deps: CompletionQueueDeps<T>;
  #queue: PendingCompletion<T>[] = [];
  /** How many of the queued outcomes are at each endpoint (what `hold` is asked about, kept as they come and go). */
  readonly #queuedAt = new Map<string, number>();
  /** Per endpoint, the outcomes of the batch being written now. */
  #writingAt = new Map<string, number>();
  #flushing: Promise<void> | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(deps: CompletionQueueDeps<T>) {
    this.#deps = deps;
  }

  get size(): number {
    return this.#queue.length;
  }

  /** Outcomes at this endpoint not written yet: queued, or in the batch being written. */
  unwrittenAt(endpointId: string): number {
    return (this.#queuedAt.get(endpointId) ?? 0) + (this.#writingAt.get(endpointId) ?? 0);
  }

  push(item: PendingCompletion<T>): void {
    this.#queue.push(item);
    this.#count([item], 1);
    this.nudge();
  }

  /** Writes what is queued now, unless it may wait for more (`hold`): then at the latest in HOLD_MS. */
  nudge(): void {
    if (this.#flushing || this.#queue.length === 0) return;
    if (this.#holding()) {
      this.#timer ??= setTimeout(() => {
        this.#timer = null;
        this.#flushing ??= this.#flush();
      }, HOLD_MS);
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#flushing = this.#flush();
  }

  /** Resolves once everything queued so far has been written (or given up on). */
  async idle(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
      this.#flushing ??= this.#flush();
    }
    while (this.#flushing) await this.#flushing;
  }

  /** Whether what is queued may wait for more (see CompletionQueueDeps.hold). */
  #holding(): boolean {
    const hold = this.#deps.hold;
    if (!hold || this.#queue.length >= HOLD_BATCH) return false;
    return hold(this.#queuedAt.keys());
  }

  #count(items: PendingCompletion<T>[], by: 1 | -1): void {
    for (const item of items) {
      const id = item.attempt.endpointId;
      const n = (this.#queuedAt.get(id) ?? 0) + by;
      if (n > 0) this.#queuedAt.set(id, n);
      else this.#queuedAt.delete(id);
    }
  }

  async #flush(): Promise<void> {
    let first = true;
    try {
      while (this.#queue.length > 0) {
        // What came in during the last write may wait for more, like any other (nudge).
        if (!first && this.#holding()) break;
        first = false;
        const batch = this.#queue.splice(0, MAX_BATCH);
        this.#count(batch, -1);
        let recorded: boolean[];
        this.#writingAt = countAt(batch);
        try {
          recorded = await this.#deps.write(batch);
        } catch (error) {
          this.#writingAt = new Map();
          const now = this.#deps.clock();
          const alive = batch.filter((item) => item.leaseUntil > now);
          this.#deps.logger.log("error", "could not record delivery outcomes; trying again", {
            count: batch.length,
            error: String(error),
          });
          // Back to the front, in order; those whose lease ran out will be claimed again.
          this.#queue.unshift(...alive);
          this.#count(alive, 1);
          await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
          continue;
        }
        this.#writingAt = new Map();
        this.#deps.written(batch, recorded);
      }
    } finally {
      this.#flushing = null;
    }
    this.nudge();
  }
}

/** How many of these outcomes are at each endpoint. */
function countAt<T>(items: PendingCompletion<T>[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const id = item.attempt.endpointId;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}
