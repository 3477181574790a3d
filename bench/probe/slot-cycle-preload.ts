// Preloaded into `outboxd serve` by bench/probe/slot-cycle.ts: notes, per delivery, when its
// commit resolved, when it joined the slots (claimed or leased: Slots.add), when its send started
// (Slots.next), when the main thread saw the receiver's answer (CompletionQueue.push) and when its
// outcome was written (the "attempt" event); the writer's wait for the dispatcher's bookkeeping
// (non-durable operations, queued → resolved); each wait for the WAL's fsync; the slots' occupancy and the event loop's lag,
// sampled every 2 ms with the WAL's frames (written, checkpointed) and the JS heap's size and the JIT's compile time so far (a stall that
// shrinks the heap was a collection; one that adds compile time, a compilation). Written to PROBE_OUT as the process exits. It patches the checkout's own
// modules (the server's working directory), so it works on older checkouts too.
import { heapSize, totalCompileTime } from "bun:jsc";
import { openSync, readSync, writeFileSync } from "node:fs";

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
/** at, event-loop lag, in flight, ready, JS heap MB, JIT compile ms so far: what a stall coincides with. */
const samples: [number, number, number, number, number, number][] = [];
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
let last = now();
setInterval(() => {
  const at = now();
  let inFlight = 0;
  let ready = 0;
  for (const s of slotsSeen) {
    inFlight += s.inFlight;
    ready += s.ready;
  }
  samples.push([at, at - last - 2, inFlight, ready, heapSize() / 1e6, totalCompileTime()]);
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
    }),
  );
});
