// Preloaded into `outboxd serve` by bench/probe/slot-cycle.ts: notes, per delivery, when its
// commit resolved, when it joined the slots (claimed or leased: Slots.add), when its send started
// (Slots.next), when the main thread saw the receiver's answer (CompletionQueue.push) and when its
// outcome was written (the "attempt" event); the writer's wait for the dispatcher's bookkeeping
// (non-durable operations, queued → resolved); each wait for the WAL's fsync; the slots' occupancy and the event loop's lag,
// sampled every 2 ms with the WAL's frames (written, checkpointed) and the JS heap's size and the JIT's compile time so far (a stall that
// shrinks the heap was a collection; one that adds compile time, a compilation). Written to PROBE_OUT as the process exits. It patches the checkout's own
// modules (the server's working directory), so it works on older checkouts too.
import { heapSize, totalCompileTime } from "bun:jsc";
import { openSync, readFileSync, readSync, writeFileSync } from "node:fs";

type Method = (...args: unknown[]) => unknown;
interface Patchable {
  prototype: Record<string, unknown>;
}
interface Delivery {
  id: string;
  eventId: string;
  aggregate: string;
  sequence: number;
}

const root = process.cwd();
const mod = async (path: string, name: string) =>
  ((await import(`${root}/${path}`)) as Record<string, Patchable>)[name] as Patchable;
const CommitService = await mod("src/commit/service.ts", "CommitService");
const Slots = await mod("src/dispatch/slots.ts", "Slots");
const CompletionQueue = await mod("src/dispatch/completions.ts", "CompletionQueue");
const Dispatcher = await mod("src/dispatch/dispatcher.ts", "Dispatcher");
const Writer = await mod("src/db/writer.ts", "Writer");
const WalSync = await mod("src/db/wal-sync.ts", "WalSync");
// Absent from checkouts before session 7 (no writer thread there).
const WriterThread = await mod("src/db/writer-thread.ts", "WriterThread").catch(() => null);
const now = () => performance.now();

const committed: [string, number][] = [];
/** id, eventId, aggregate, sequence, ready, started, answered, written */
const deliveries = new Map<string, [string, string, string, number, number, number, number, number]>();
const bookkeeping: [number, number][] = [];
/** Each wait for the WAL's fsync (WalSync.afterCommit: asked → on disk). */
const syncs: [number, number][] = [];
/** The WAL's last frame and frames checkpointed (its index header, as checkpoint-worker.ts reads it), every 2 ms. */
const wal: [number, number, number][] = [];
const databaseFile = (process.env.OUTBOXD_DATABASE_URL ?? "").replace(/^file:/, "");
let shm: number | null = null;
const shmHeader = Buffer.alloc(100);
/**
 * at, event-loop lag, in flight, ready, JS heap MB, JIT compile ms so far, and the main thread's
 * scheduler times so far (ms on a CPU, ms waiting for one: /proc/self/task/<pid>/schedstat): what a
 * stall coincides with (run + wait short of its length: the thread was blocked, e.g. asleep in a lock).
 */
const samples: [number, number, number, number, number, number, number, number][] = [];
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const scheduled = (): [number, number] => {
  try {
    const [run, wait] = readFileSync(schedstat, "utf8").split(" ").map(Number);
    return [(run ?? 0) / 1e6, (wait ?? 0) / 1e6];
  } catch {
    return [0, 0];
  }
};
const slotsSeen = new Set<{ inFlight: number; ready: number }>();
let dispatcher: { leasedBy: Record<string, number> } | null = null;

const commit = CommitService.prototype.commit as Method;
CommitService.prototype.commit = async function (this: unknown, ...args: unknown[]) {
  const answer = (await commit.apply(this, args)) as { result?: { events: { id: string }[] } };
  const at = now();
  for (const event of answer.result?.events ?? []) committed.push([event.id, at]);
  return answer;
};
const add = Slots.prototype.add as Method;
Slots.prototype.add = function (this: { inFlight: number; ready: number }, ...args: unknown[]) {
  slotsSeen.add(this);
  const at = now();
  for (const d of args[0] as Delivery[])
    deliveries.set(d.id, [d.id, d.eventId, d.aggregate, d.sequence, at, 0, 0, 0]);
  return add.apply(this, args);
};
const next = Slots.prototype.next as Method;
Slots.prototype.next = function (this: unknown, ...args: unknown[]) {
  const d = next.apply(this, args) as Delivery | null;
  if (d) {
    const row = deliveries.get(d.id);
    if (row) row[5] = now();
  }
  return d;
};
const push = CompletionQueue.prototype.push as Method;
CompletionQueue.prototype.push = function (this: unknown, ...args: unknown[]) {
  const row = deliveries.get((args[0] as { record: { deliveryId: string } }).record.deliveryId);
  if (row) row[6] = now();
  return push.apply(this, args);
};
const emit = Dispatcher.prototype.emit as Method;
Dispatcher.prototype.emit = function (this: { leasedBy: Record<string, number> }, ...args: unknown[]) {
  dispatcher = this;
  if (args[0] === "attempt") {
    const row = deliveries.get((args[1] as { deliveryId: string }).deliveryId);
    if (row) row[7] = now();
  }
  return emit.apply(this, args);
};
const write = Writer.prototype.write as Method;
Writer.prototype.write = function (this: unknown, ...args: unknown[]) {
  const promise = write.apply(this, args) as Promise<unknown>;
  if ((args[1] as { durable?: boolean } | undefined)?.durable === false) {
    const at = now();
    void promise.then(
      () => bookkeeping.push([at, now()]),
      () => {},
    );
  }
  return promise;
};
const afterCommit = WalSync.prototype.afterCommit as Method;
WalSync.prototype.afterCommit = function (this: unknown, ...args: unknown[]) {
  const at = now();
  const promise = afterCommit.apply(this, args) as Promise<unknown>;
  void promise.then(
    () => syncs.push([at, now()]),
    () => {},
  );
  return promise;
};
// The writer thread's writes (OUTBOXD_WRITER_THREAD=worker): per write id, its name, the delivery
// or event ids it carries, when it was queued here, posted and answered here; the writer thread
// notes the rest (slot-cycle-writer.ts, loaded there).
const absolute = () => performance.timeOrigin + performance.now();
/** id, name, queued, posted, answered (absolute ms) */
const threadWrites = new Map<number, [number, string, number, number, number]>();
/** event or delivery id → the id of the write that committed or completed it. */
const writeOf: Record<string, number> = {};
/** Commits posted with a lease budget for their heads, and without one (their deliveries are then claimed). */
const budgets = { with: 0, without: 0 };
if (WriterThread) {
  const start = (WriterThread as unknown as { start: Method }).start;
  (WriterThread as unknown as { start: Method }).start = function (this: unknown, ...args: unknown[]) {
    const options = args[0] as { modules?: string[] };
    args[0] = {
      ...options,
      modules: [...(options.modules ?? []), `${import.meta.dir}/slot-cycle-writer.ts`],
    };
    return start.apply(this, args);
  };
  let ids = 0;
  const threadWrite = WriterThread.prototype.write as Method;
  WriterThread.prototype.write = function (this: unknown, ...args: unknown[]) {
    const id = ++ids;
    const request = args[0] as { name: string; args: unknown[] };
    const row: [number, string, number, number, number] = [id, request.name, absolute(), 0, 0];
    threadWrites.set(id, row);
    // Its items cross as arrays since session 10 (writes.ts PackedItem: the delivery id first).
    if (request.name === "dispatch.completeAndClaim")
      for (const item of request.args[0] as ([string] | { attempt: { deliveryId: string } })[])
        writeOf[Array.isArray(item) ? item[0] : item.attempt.deliveryId] = id;
    const promise = threadWrite.apply(this, args) as Promise<unknown>;
    void promise.then(
      (value) => {
        row[4] = absolute();
        const events = (value as { result?: { events?: { id: string }[] } } | null)?.result?.events;
        if (request.name === "commit") for (const event of events ?? []) writeOf[event.id] = id;
      },
      () => {},
    );
    return promise;
  };
  const post = Worker.prototype.postMessage as Method;
  Worker.prototype.postMessage = function (this: unknown, ...args: unknown[]) {
    const message = args[0] as { kind?: string; writes?: [number, string][] | string; budget?: unknown };
    if (message?.kind === "write" && message.writes !== undefined) {
      const t = absolute();
      // Plain writes go as JSON text (writer-thread.ts).
      const writes =
        typeof message.writes === "string"
          ? (JSON.parse(message.writes) as [number, string][])
          : message.writes;
      const commits = writes.filter(([, name]) => name === "commit").length;
      if (commits > 0) budgets[message.budget ? "with" : "without"] += commits;
      for (const [id] of writes) {
        const row = threadWrites.get(id);
        if (row) row[3] = t;
      }
    }
    return post.apply(this, args);
  };
}
let last = now();
setInterval(() => {
  const at = now();
  let inFlight = 0;
  let ready = 0;
  for (const s of slotsSeen) {
    inFlight += s.inFlight;
    ready += s.ready;
  }
  samples.push([at, at - last - 2, inFlight, ready, heapSize() / 1e6, totalCompileTime(), ...scheduled()]);
  try {
    shm ??= openSync(`${databaseFile}-shm`, "r");
    if (readSync(shm, shmHeader, 0, 100, 0) === 100)
      wal.push([at, shmHeader.readUInt32LE(16), shmHeader.readUInt32LE(96)]);
  } catch {
    // Not created yet.
  }
  last = at;
}, 2).unref();
process.on("exit", () => {
  writeFileSync(
    process.env.PROBE_OUT as string,
    JSON.stringify({
      committed,
      deliveries: [...deliveries.values()],
      bookkeeping,
      samples,
      syncs,
      wal,
      leasedBy: dispatcher?.leasedBy ?? null,
      timeOrigin: performance.timeOrigin,
      threadWrites: [...threadWrites.values()],
      writeOf,
      budgets,
    }),
  );
});
