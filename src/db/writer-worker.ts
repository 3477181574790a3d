// The writer thread's side (writer-thread.ts starts it; writer-worker-main.ts is its module, which
// first imports every named write). It opens the engine driver (the process's one writer
// connection, the checkpointer's own worker) and a Writer, and runs the named writes it is posted
// with the same definitions the main thread has (writer-ops.ts). Each answer goes back once the
// Writer settles it (after its COMMIT returned): those settled together (a group's) in one message,
// posted as soon as they are all settled, not a turn of the event loop later.
//
// A fatal storage error (storage-errors.ts) is posted as a message of its own, and this thread
// then blocks for good: the main thread stops the process on reading it, and no answer of that
// COMMIT or any later one is ever posted.
import { type EngineDriver, openEngineDriver } from "./engine-driver.ts";
import { reportFatalWith } from "./storage-errors.ts";
import { Writer } from "./writer.ts";
import { encodeError } from "./writer-errors.ts";
import { type Borrow, definedWrites, operationOf } from "./writer-ops.ts";
import type { Answer, FromWriter, PostedWrite, ToWriter, WriterThreadStart } from "./writer-thread.ts";

/** The worker's side of its port (a Worker's global scope). */
const port = globalThis as unknown as {
  onmessage: ((event: MessageEvent<ToWriter>) => void) | null;
  postMessage(message: FromWriter): void;
};

let driver: EngineDriver | null = null;
let writer: Writer | null = null;
let answers: Answer[] = [];

/**
 * Serves the main thread; `started` runs first (enables the failpoints); `borrow` builds the
 * stand-in of a budget of the loan (writer-ops.ts WriteLoan).
 */
export function serveWriter(started: (start: WriterThreadStart) => void, borrow: Borrow): void {
  reportFatalWith((path, error) => {
    port.postMessage({ kind: "fatal", report: { path, error: encodeError(error) } });
    // Nothing more runs on this thread; the main thread ends the process.
    const never = new Int32Array(new SharedArrayBuffer(4));
    for (;;) Atomics.wait(never, 0, 0);
  });
  port.onmessage = (event) => {
    const message = event.data;
    if (message.kind === "write") write(message.writes, message.budget, borrow);
    else if (message.kind === "start") void open(message.start, started);
    else void close();
  };
}

async function open(start: WriterThreadStart, started: (start: WriterThreadStart) => void): Promise<void> {
  try {
    for (const module of start.modules ?? []) await import(module);
    started(start);
    driver = openEngineDriver(start.path, start.options);
    writer = new Writer(driver);
    port.postMessage({ kind: "ready", writes: definedWrites() });
  } catch (error) {
    port.postMessage({ kind: "failed", error: encodeError(error) });
  }
}

function write(posted: PostedWrite[], budget: unknown, borrow: Borrow): void {
  const queue = writer as Writer;
  for (const [id, name, args, durable, borrowing] of posted) {
    const took: unknown[] = [];
    let done: Promise<unknown>;
    try {
      // Each write that borrows gets a stand-in of the message's one budget (shared room).
      const lent = borrowing ? borrow(budget, (item) => took.push(item)) : undefined;
      done = queue.write(operationOf({ name, args }, lent), { durable });
    } catch (error) {
      done = Promise.reject(error);
    }
    done.then(
      (value) => answer([id, true, value, took]),
      (error) => answer([id, false, encodeError(error), took]),
    );
  }
}

function answer(item: Answer): void {
  answers.push(item);
  if (answers.length > 1) return;
  // After the other answers settled with this one: a group's callers are all settled in one go.
  queueMicrotask(() => {
    const batch = answers;
    answers = [];
    const full = writer?.storageFull ?? false;
    try {
      port.postMessage({ kind: "answers", answers: batch, full });
    } catch {
      // A value that cannot be cloned (a write answering a function, say): a bug, told to its caller.
      for (const one of batch) {
        try {
          port.postMessage({ kind: "answers", answers: [one], full });
        } catch (error) {
          port.postMessage({ kind: "answers", answers: [[one[0], false, encodeError(error), one[3]]], full });
        }
      }
    }
  });
}

async function close(): Promise<void> {
  await writer?.idle();
  await driver?.close();
  port.postMessage({ kind: "closed" });
}
