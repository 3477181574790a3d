// Loaded into the writer thread (OUTBOXD_WRITER_THREAD=worker) by bench/probe/slot-cycle-preload.ts,
// through the thread's start message (WriterThreadStart.modules): notes, per write posted to it,
// when its message arrived, when its operation began to run, when its transaction committed, when
// the Writer settled it (after the WAL sync for a durable write) and when its answer was posted
// back; and the thread's scheduler times (/proc/self/task/<tid>/schedstat) sampled every 2 ms.
// Written to PROBE_OUT.writer.json when the thread is told to close.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

type Method = (...args: unknown[]) => unknown;
interface Patchable {
  prototype: Record<string, unknown>;
}
const root = process.cwd();
const mod = async (path: string, name: string) =>
  ((await import(`${root}/${path}`)) as Record<string, Patchable>)[name] as Patchable;
const Writer = await mod("src/db/writer.ts", "Writer");
const WalSync = await mod("src/db/wal-sync.ts", "WalSync");
const at = () => performance.timeOrigin + performance.now();

/** id → received, started, (committed: slot-cycle.ts finds it in `commits`), settled, answered (absolute ms). */
const writes = new Map<number, [number, number, number, number, number]>();
/** Each COMMIT (a transaction's first afterCommit or settled after it ran). */
const commits: number[] = [];
let receiving: number[] = [];
/** Writer.write is called once per posted write, in order, while its message is handled. */
let nth = 0;

const port = globalThis as unknown as {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
};
const onmessage = port.onmessage as (event: MessageEvent) => void;
port.onmessage = (event) => {
  const message = event.data as { kind: string; writes?: [number][] | string };
  if (message.kind === "write") {
    const t = at();
    // Plain writes come as JSON text (writer-thread.ts).
    const posted =
      typeof message.writes === "string" ? (JSON.parse(message.writes) as [number][]) : message.writes;
    receiving = (posted ?? []).map(([id]) => id);
    nth = 0;
    for (const id of receiving) writes.set(id, [t, 0, 0, 0, 0]);
  } else if (message.kind === "close") {
    writeFileSync(
      `${process.env.PROBE_OUT}.writer.json`,
      JSON.stringify({ writes: [...writes], commits, samples }),
    );
  }
  onmessage(event);
  receiving = [];
};
const postMessage = port.postMessage.bind(port);
port.postMessage = (message) => {
  const t = at();
  const m = message as { kind: string; answers?: [number][] | string };
  const answers = typeof m.answers === "string" ? (JSON.parse(m.answers) as [number][]) : m.answers;
  if (m.kind === "answers")
    for (const [id] of answers ?? []) {
      const row = writes.get(id);
      if (row) row[4] = t;
    }
  postMessage(message);
};

const write = Writer.prototype.write as Method;
Writer.prototype.write = function (this: unknown, op: unknown, options: unknown) {
  const id = receiving[nth++];
  const row = id === undefined ? undefined : writes.get(id);
  const started = () => {
    if (row && row[1] === 0) row[1] = at();
  };
  const wrap = (generator: Generator) => {
    const next = generator.next.bind(generator);
    generator.next = (...args: [unknown]) => {
      started();
      return next(...args);
    };
    return generator;
  };
  const wrapped = typeof op === "function" ? () => wrap((op as () => Generator)()) : wrap(op as Generator);
  const promise = write.call(this, wrapped, options) as Promise<unknown>;
  void promise.then(
    () => {
      if (row) row[3] = at();
    },
    () => {},
  );
  return promise;
};
for (const name of ["afterCommit", "settled"]) {
  const original = WalSync.prototype[name] as Method;
  WalSync.prototype[name] = function (this: unknown, ...args: unknown[]) {
    commits.push(at());
    return original.apply(this, args);
  };
}

/** at, ms on a CPU, ms waiting for one (this thread). */
const samples: [number, number, number][] = [];
const tid = (() => {
  // This thread: the task whose name is the Worker's and whose CPU time grows while we spin.
  const tasks = readdirSync("/proc/self/task");
  const cpu = () =>
    new Map(
      tasks.map((t) => [t, Number(readFileSync(`/proc/self/task/${t}/schedstat`, "utf8").split(" ")[0])]),
    );
  const before = cpu();
  const end = performance.now() + 30;
  while (performance.now() < end) {}
  const after = cpu();
  let best = "";
  let most = -1;
  for (const [t, ns] of after) {
    const grew = ns - (before.get(t) ?? ns);
    if (grew > most) {
      most = grew;
      best = t;
    }
  }
  return best;
})();
setInterval(() => {
  const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
  samples.push([at(), (run ?? 0) / 1e6, (wait ?? 0) / 1e6]);
}, 2).unref();
