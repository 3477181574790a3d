// The engine driver's single writer on a thread of its own (DESIGN §6): the main thread keeps HTTP,
// the dispatcher and the reads; the writer thread (writer-worker.ts) holds the process's one
// writer connection with its checkpointer and runs the named writes (writer-ops.ts) it is posted,
// on a Writer of its own, group commit and all. A COMMIT's fsync (synchronous=FULL) then blocks
// that thread alone, while this one goes on parsing requests and sending webhooks.
//
// Writes queued in one turn of the event loop go over as one message (so the writer thread's
// Writer sees them together and groups them as it would here), with a budget of whatever the
// loan lends (the dispatcher's head leases: deliveries/lease-budget.ts). Answers come back in
// batches, each only once the writer thread has it: after its COMMIT returned there.
//
// A fatal storage error there (storage-errors.ts) comes back as a message of its own, ahead of
// any answer after it, and this thread stops the process on reading it: nothing is answered for
// the writes of that COMMIT or any later one. A writer thread that dies otherwise ends the
// process too (exit 1): its writes were never answered, so none was acknowledged, and a
// supervisor restarts the process whole; it is never restarted silently.
import type { DriverOptions } from "./driver.ts";
import { decodeError, type WireError } from "./writer-errors.ts";
import { borrowsOf, type NamedWrite, type WriteLoan, type WriteOptions } from "./writer-ops.ts";

/** Messages of writes in flight at most (#mayPostNow). */
export const IN_FLIGHT = 2;
/** Writes queued that go at once rather than at the end of the turn, when a message may go (#mayPostNow). */
export const EARLY = 32;

/** The writer thread's module (scripts/build.ts names it as an entry point of the executable too). */
const ENTRY = new URL("./writer-worker-main.ts", import.meta.url);

export interface WriterThreadStart {
  path: string;
  options: DriverOptions;
  /** The failpoints of the crash drills, enabled on the writer thread too (failpoints.ts). */
  failpoints: readonly string[];
  /** More modules that define named writes, loaded there first (tests: test/helpers/test-writes.ts). */
  modules?: readonly string[];
}

/** One write as posted: id, name, arguments, durable, borrows the message's budget. */
export type PostedWrite = [number, string, unknown[], boolean, boolean];

/** An answer: id, ok, value or error, what it took from the budget. */
export type Answer = [number, true, unknown, unknown[]] | [number, false, WireError, unknown[]];

export type ToWriter =
  | { kind: "start"; start: WriterThreadStart }
  | { kind: "write"; writes: PostedWrite[]; budget: unknown }
  | { kind: "close" };

/** A fatal storage error met there: the process stops (storage-errors.ts stopOnFatal). */
export interface FatalReport {
  path: string;
  error: WireError;
}

export type FromWriter =
  | { kind: "ready"; writes: string[] }
  | { kind: "failed"; error: WireError }
  /** `full`: the writer there last failed with SQLITE_FULL (Writer.storageFull). */
  | { kind: "answers"; answers: Answer[]; full: boolean }
  | { kind: "fatal"; report: FatalReport }
  | { kind: "closed" };

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** The budget this write borrows from, if any. */
  budget: Budget | null;
  /** The message it went in (null while queued). */
  sent: Sent | null;
}

/** A message posted: its writes not answered yet, and whether it carries a budget of the loan. */
interface Sent {
  left: number;
  budget: boolean;
}

interface Budget {
  budget: unknown;
  /** Its writes not answered yet. */
  left: number;
}

interface Queued {
  id: number;
  request: NamedWrite<unknown>;
  durable: boolean;
  borrows: number;
}

export interface WriterThreadEnds {
  /** It met a fatal storage error: stop the process (called synchronously, before any answer after it). */
  fatal(report: FatalReport): void;
  /** It ended without being closed. */
  died(reason: string): void;
}

export class WriterThread {
  readonly #worker: Worker;
  #next = 0;
  readonly #pending = new Map<number, Pending>();
  #queue: Queued[] = [];
  /** Messages posted with writes not all answered yet. */
  #inFlight = 0;
  /** Those of them that carry a budget of the loan. */
  #budgetsOut = 0;
  /** The loan lent a budget to the last message posted that asked for one. */
  #lending = false;
  #loan: WriteLoan<unknown> | null = null;
  /** A post is scheduled (the end of this turn of the event loop). */
  #postScheduled = false;
  #closing = false;
  #closed: (() => void) | null = null;
  #idle: (() => void)[] = [];
  #full = false;
  /** The names of the writes the writer thread knows (for a test: the same as this thread's). */
  definedThere: string[] = [];

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Starts the writer thread and opens the database there; resolves once it is ready. */
  static async start(start: WriterThreadStart, ends: WriterThreadEnds): Promise<WriterThread> {
    const worker = new Worker(ENTRY, { type: "module", smol: true } as WorkerOptions);
    const thread = new WriterThread(worker);
    const ready = new Promise<void>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent) => {
        const message = event.data as FromWriter;
        if (message.kind === "ready") {
          thread.definedThere = message.writes;
          worker.onmessage = (next: MessageEvent) => thread.#heard(next.data as FromWriter, ends);
          resolve();
        } else if (message.kind === "failed") reject(decodeError(message.error));
        else if (message.kind === "fatal") ends.fatal(message.report);
      };
      worker.onerror = (event: ErrorEvent) =>
        reject(new Error(`the writer thread failed to start: ${event.message}`));
    });
    worker.postMessage({ kind: "start", start } satisfies ToWriter);
    try {
      await ready;
    } catch (error) {
      worker.terminate();
      throw error;
    }
    const gone = (reason: string) => {
      if (thread.#closing) return;
      thread.#closing = true;
      for (const pending of thread.#pending.values())
        pending.reject(new Error(`the writer thread died: ${reason}`));
      thread.#pending.clear();
      ends.died(reason);
    };
    worker.onerror = (event: ErrorEvent) => gone(event.message);
    worker.addEventListener("close", () => gone("it exited"));
    // Answers that cannot be read are answers lost: as fatal as the thread's death.
    worker.addEventListener("messageerror", () => gone("a message from it could not be read"));
    return thread;
  }

  write<T>(request: NamedWrite<T>, options: WriteOptions = {}): Promise<T> {
    if (this.#closing) return Promise.reject(new Error("the database is closed"));
    return new Promise<T>((resolve, reject) => {
      const id = ++this.#next;
      const borrows = this.#loan ? borrowsOf(request) : 0;
      this.#queue.push({ id, request, durable: options.durable ?? true, borrows });
      this.#pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        budget: null,
        sent: null,
      });
      if (this.#mayPostNow()) this.#post();
      else this.#schedulePost();
    });
  }

  /** Whether the writer there last failed with SQLITE_FULL (Writer.storageFull). */
  get storageFull(): boolean {
    return this.#full;
  }

  lend(loan: WriteLoan<unknown>): void {
    this.#loan = loan;
  }

  idle(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Waits for every write under way, closes the database on the writer thread and ends it. */
  async close(): Promise<void> {
    await this.idle();
    if (this.#closing) return;
    this.#closing = true;
    const closed = new Promise<void>((resolve) => {
      this.#closed = resolve;
    });
    this.#worker.postMessage({ kind: "close" } satisfies ToWriter);
    await closed;
    this.#worker.terminate();
  }

  /**
   * Writes queued in a turn of the event loop go together at its end when no message is in
   * flight; what is queued while one is goes with the next, once it is answered: each message
   * costs both threads a wake-up, and writes that reach the writer thread while it commits wait
   * there for the next group anyway. One exception, for a burst (commits alone, a closed loop of
   * clients): EARLY writes queued go at once, as a second message if one is in flight, so the
   * writer thread commits one group while this thread prepares the next instead of each waiting
   * for the other. Never while the dispatcher's loan lends (the last message's commits got a
   * budget of head leases, or one is still out): a second budget would find the first's room
   * promised and leave its commits' heads to the claims, and a turn's writes split in two would
   * make the rest wait a round trip for the first.
   */
  #mayPostNow(): boolean {
    if (this.#queue.length < EARLY || this.#lending || this.#budgetsOut > 0) return false;
    return this.#inFlight < IN_FLIGHT;
  }

  #schedulePost(): void {
    if (this.#postScheduled || this.#queue.length === 0 || this.#inFlight > 0) return;
    this.#postScheduled = true;
    setImmediate(() => {
      this.#postScheduled = false;
      if (this.#inFlight === 0) this.#post();
    });
  }

  #post(): void {
    const queue = this.#queue;
    this.#queue = [];
    if (queue.length === 0) return;
    this.#inFlight += 1;
    let units = 0;
    for (const item of queue) units += item.borrows;
    const reserved = units > 0 ? (this.#loan?.reserve(units) ?? null) : null;
    if (units > 0) this.#lending = reserved !== null;
    const sent: Sent = { left: queue.length, budget: reserved !== null };
    if (sent.budget) this.#budgetsOut += 1;
    const budget: Budget | null = reserved === null ? null : { budget: reserved, left: 0 };
    // A loop, not queue.map (one builtin shared by every caller: see the dispatcher's batches).
    const writes: PostedWrite[] = [];
    for (const { id, request, durable, borrows } of queue) {
      const borrowing = budget !== null && borrows > 0;
      const pending = this.#pending.get(id) as Pending;
      pending.sent = sent;
      if (borrowing) {
        budget.left += 1;
        pending.budget = budget;
      }
      writes.push([id, request.name, request.args, durable, borrowing]);
    }
    try {
      this.#worker.postMessage({ kind: "write", writes, budget: reserved } satisfies ToWriter);
    } catch (error) {
      // An argument that cannot be cloned: a bug in the write's caller, answered to each of them.
      for (const { id } of queue)
        this.#answer([
          id,
          false,
          {
            name: "DataCloneError",
            message: String(error),
            stack: undefined,
            code: undefined,
            errno: undefined,
          },
          [],
        ]);
    }
  }

  #heard(message: FromWriter, ends: WriterThreadEnds): void {
    if (message.kind === "answers") {
      this.#full = message.full;
      for (const answer of message.answers) this.#answer(answer);
    } else if (message.kind === "fatal") {
      ends.fatal(message.report);
    } else if (message.kind === "closed") {
      this.#closed?.();
    }
  }

  #answer([id, ok, value, took]: Answer): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    const { sent } = pending;
    if (sent !== null) {
      sent.left -= 1;
      if (sent.left === 0) {
        this.#inFlight -= 1;
        if (sent.budget) this.#budgetsOut -= 1;
        if (this.#mayPostNow()) this.#post();
        else this.#schedulePost();
      }
    }
    // What the write took from its budget (a head leased), before its caller hears of the write.
    for (const item of took) this.#loan?.took(item);
    const { budget } = pending;
    if (budget !== null) {
      budget.left -= 1;
      if (budget.left === 0) this.#loan?.giveBack(budget.budget);
    }
    if (ok) pending.resolve(value);
    else pending.reject(decodeError(value as WireError));
    if (this.#pending.size === 0) this.#settled();
  }

  /**
   * Nothing under way: idle() resolves. (The thread stays referenced until close(): Bun did not
   * always wake its event loop for the messages of a worker unreferenced in between writes.)
   */
  #settled(): void {
    for (const resolve of this.#idle.splice(0)) resolve();
  }
}
