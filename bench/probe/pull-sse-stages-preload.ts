// Preloaded into `outboxd serve` by bench/probe/pull-sse-stages.ts: notes when each event's commit
// resolved, when the stream's lease that returned it began and ended, and when its SSE write was
// done (wall clock, ms), and writes them to PROBE_OUT as the process exits. It patches the
// checkout's own modules (the server's working directory), so it works on older checkouts too.
import { writeFileSync } from "node:fs";

interface Pulled {
  json?: string;
}
interface Sink {
  deliver(batch: Pulled[]): Promise<void>;
  readonly signal: AbortSignal;
}
type Method = (...args: unknown[]) => Promise<unknown>;
interface Patchable {
  prototype: Record<string, unknown>;
}

const root = process.cwd();
const { PullService } = (await import(`${root}/src/pull/service.ts`)) as { PullService: Patchable };
const { CommitService } = (await import(`${root}/src/commit/service.ts`)) as { CommitService: Patchable };
const now = () => performance.timeOrigin + performance.now();
const committed: [string, number][] = [];
const leased: [string, number, number][] = [];
const written: [string, number][] = [];
const eventId = (pulled: Pulled) => /"event":\{"id":"([^"]+)"/.exec(pulled.json ?? "")?.[1] ?? "";

const commit = CommitService.prototype.commit as Method;
CommitService.prototype.commit = async function (this: unknown, ...args: unknown[]) {
  const answer = (await commit.apply(this, args)) as { result?: { events: { id: string }[] } };
  const at = now();
  for (const event of answer.result?.events ?? []) committed.push([event.id, at]);
  return answer;
};
const lease = PullService.prototype.lease as Method;
PullService.prototype.lease = async function (this: unknown, ...args: unknown[]) {
  const began = now();
  const batch = (await lease.apply(this, args)) as { data: Pulled[] };
  const ended = now();
  for (const pulled of batch.data) leased.push([eventId(pulled), began, ended]);
  return batch;
};
const stream = PullService.prototype.stream as Method;
PullService.prototype.stream = function (this: unknown, endpointId: unknown, options: unknown, sink: Sink) {
  const noted: Sink = {
    get signal() {
      return sink.signal;
    },
    async deliver(batch) {
      await sink.deliver(batch);
      const at = now();
      for (const pulled of batch) written.push([eventId(pulled), at]);
    },
  };
  return stream.call(this, endpointId, options, Object.setPrototypeOf(noted, sink));
};
process.on("exit", () => {
  writeFileSync(process.env.PROBE_OUT as string, JSON.stringify({ committed, leased, written }));
});
