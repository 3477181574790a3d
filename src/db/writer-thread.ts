// The single writer on a thread of its own (OUTBOXD_WRITER_THREAD=worker, issue 12): the main
// thread keeps HTTP, the dispatcher and the reads; the writer thread (writer-worker.ts) holds the
// process's one writer connection with its checkpointer, and runs the named writes
// (writer-ops.ts) it is posted on the same Writer as the main thread would, group commit and all.
//
// Writes queued in one turn of the event loop go over as one message (so the writer thread's
// Writer sees them together and groups them as it would here), with a budget of whatever the
// loan lends (the dispatcher's head leases). Answers come back in batches, each only once the
// writer thread has it: after its COMMIT's WAL sync for a durable write, as on the main thread.
// A message whose writes (or answers) are all plain (writer-ops.ts DefineOptions.plain: every
// commit) carries them as JSON text: a structured clone of a commit's input cost the posting
// thread ~19 µs against ~4 for JSON.stringify and the post of its text (in process, 64 commits
// per message), and about as much again to read it on the other side.
// A writer thread that dies ends the process (exit 1): its writes were never answered, so none
// was acknowledged, and a supervisor restarts the process whole; it is never restarted silently.
import type { DriverOptions } from "./driver.ts";
import { decodeError, type WireError } from "./writer-errors.ts";
import {
  borrowsOf,
  isPlain,
  type NamedWrite,
  type WriteLoan,
  type WriteOptions,
  type Writes,
} from "./writer-ops.ts";

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
  /** More modules that define named writes, loaded there first (tests: the storage suite's). */
  modules?: readonly string[];
}

/** One write as posted: id, name, arguments, durable, borrows the message's budget. */
export type PostedWrite = [number, string, unknown[], boolean, boolean];

/** An answer: id, ok, value or error, what it took from the budget. */
export type Answer = [number, true, unknown, unknown[]] | [number, false, WireError, unknown[]];

/** Writes or answers as they cross: the list itself, or its JSON text when every one is plain. */
export type Carried<T> = T[] | string;

/** The list a message carries. */
export function carried<T>(items: Carried<T>): T[] {
  return typeof items === "string" ? (JSON.parse(items) as T[]) : items;
}

export type ToWriter =
  | { kind: "start"; start: WriterThreadStart }
  | { kind: "write"; writes: Carried<PostedWrite>; budget: unknown }
  | { kind: "close" };

export type FromWriter =
  | { kind: "ready"; writes: string[] }
  | { kind: "failed"; error: WireError }
  | { kind: "answers"; answers: Carried<Answer> }
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
  plain: boolean;
}

export class WriterThread implements Writes {
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
  /** A post is scheduled (the end of this turn of the event loop). */
  #postScheduled = false;
  #loan: WriteLoan<unknown> | null = null;
  #closing = false;
  #closed: (() => void) | null = null;
  #idle: (() => void)[] = [];
  /** The names of the writes the writer thread knows (for a test: the same as this thread's). */
  definedThere: string[] = [];

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /**
   * Starts the writer thread and opens the database there; resolves once it is ready. `died` is
   * called if it ends without being closed (the caller ends the process).
   */
  static async start(start: WriterThreadStart, died: (reason: string) => void): Promise<WriterThread> {
    const worker = new Worker(ENTRY, { type: "module", smol: true } as WorkerOptions);
    const thread = new WriterThread(worker);
    const ready = new Promise<void>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent) => {
        const message = event.data as FromWriter;
        if (message.kind === "ready") {
          thread.definedThere = message.writes;
          worker.onmessage = (next: MessageEvent) => thread.#heard(next.data as FromWriter);
          resolve();
        } else if (message.kind === "failed") reject(decodeError(message.error));
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
      died(reason);
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
      this.#queue.push({
        id,
        request,
        durable: options.durable ?? true,
        borrows,
        plain: isPlain(request.name),
      });
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

  idle(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  lend(loan: WriteLoan<unknown>): void {
    this.#loan = loan;
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
   * costs both threads a wake-up (at 1,000 commits + deliveries/s on the shared machine, 2.2
   * writes per message and 0.73 messages per event before, 10.5 and 0.22 this way, CPU per event
   * −11–18%: bench/probe/slot-cycle.ts), and durable writes that reach the writer thread while it
   * syncs wait there for that sync anyway (Writer: holdForSync).
   *
   * One exception, for a burst (commits alone, a closed loop of clients): EARLY writes queued go
   * at once, as a second message if one is in flight, so the writer thread commits one group while
   * this thread prepares the next instead of each waiting for the other (in process, 64 commits in
   * flight, two groups of 32 instead of one of 64: +8.6% commits/s; over HTTP +10–20%). Never while
   * the dispatcher's loan lends (the last message's commits got a budget of head leases, or one is
   * still out): a second budget would find the first's room promised and leave its commits' heads
   * to the claims, and a turn's writes split in two would make the rest wait a round trip for the
   * first (mixed 2,000/s A/B: p50 88 against 36 ms without this rule, 22 against 26 with it).
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
    // Whether every write is plain: the message then carries them as JSON text.
    let plain = true;
    for (const item of queue) {
      units += item.borrows;
      if (!item.plain) plain = false;
    }
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
      this.#worker.postMessage({
        kind: "write",
        writes: plain ? JSON.stringify(writes) : writes,
        budget: reserved,
      } satisfies ToWriter);
    } catch (error) {
      // An argument that cannot be cloned: a bug in the write's caller, answered to each of them.
      for (const { id } of queue)
        this.#answer([
          id,
          false,
          { name: "DataCloneError", message: String(error), stack: undefined, code: undefined },
          [],
        ]);
    }
  }

  #heard(message: FromWriter): void {
    if (message.kind === "answers") {
      for (const answer of carried(message.answers)) this.#answer(answer);
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
