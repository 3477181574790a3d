// The writer thread's side (writer-thread.ts starts it; writer-worker-main.ts is its module,
// which first imports every named write). It opens the engine driver (the process's one writer
// connection, the checkpointer's own worker) and a Writer, and runs the named writes it is
// posted with the same definitions the main thread would use (writer-ops.ts). Each answer goes back
// once the Writer settles it (after the WAL sync for a durable write): those settled together (a
// group's) in one message, posted as soon as they are all settled, not a turn of the event loop later.
import { type EngineDriver, openEngineDriver } from "./engine-driver.ts";
import { Writer } from "./writer.ts";
import { encodeError } from "./writer-errors.ts";
import { borrow, definedWrites, operationOf } from "./writer-ops.ts";
import {
  type Answer,
  type Carried,
  carried,
  type FromWriter,
  type PostedWrite,
  type ToWriter,
  type WriterThreadStart,
} from "./writer-thread.ts";

/** The worker's side of its port (a Worker's global scope). */
const port = globalThis as unknown as {
  onmessage: ((event: MessageEvent<ToWriter>) => void) | null;
  postMessage(message: FromWriter): void;
};

let driver: EngineDriver | null = null;
let writer: Writer | null = null;
let answers: Answer[] = [];
/** Whether every answer in `answers` is a plain write's (they then go as JSON text). */
let plainAnswers = true;

/** Serves the main thread; `started` runs first (enables the failpoints). */
export function serveWriter(started: (start: WriterThreadStart) => void): void {
  port.onmessage = (event) => {
    const message = event.data;
    if (message.kind === "write") write(message.writes, message.budget);
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

function write(posted: Carried<PostedWrite>, budget: unknown): void {
  const queue = writer as Writer;
  // Posted as text only when every write in it is plain (writer-thread.ts): their answers are too.
  const plain = typeof posted === "string";
  for (const [id, name, args, durable, borrowing] of carried(posted)) {
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
      (value) => answer([id, true, value, took], plain),
      (error) => answer([id, false, encodeError(error), took], plain),
    );
  }
}

function answer(item: Answer, plain: boolean): void {
  answers.push(item);
  if (!plain) plainAnswers = false;
  if (answers.length > 1) return;
  // After the other answers settled with this one: a group's callers are all settled in one go.
  queueMicrotask(() => {
    const batch = answers;
    const text = plainAnswers;
    answers = [];
    plainAnswers = true;
    try {
      port.postMessage({ kind: "answers", answers: text ? JSON.stringify(batch) : batch });
    } catch {
      // A value that cannot be cloned (a write answering a function, say): a bug, told to its caller.
      for (const one of batch) {
        try {
          port.postMessage({ kind: "answers", answers: [one] });
        } catch (error) {
          port.postMessage({
            kind: "answers",
            answers: [[one[0], false, encodeError(error), one[3]]],
          });
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
