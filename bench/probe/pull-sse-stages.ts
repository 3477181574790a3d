// Where an SSE event's latency goes (issue 17): the quick bench's stream part (commits at RATE/s
// for SECONDS to a pull endpoint, one SSE consumer acking every 2 ms: bench/load/fixed-rate.ts,
// bench/load/pull-stream.ts) against a serve with bench/probe/pull-sse-stages-preload.ts, and per
// event: commit resolved → start of the lease that returned it (negative: that lease was already
// queued, in the commit's write group) → lease done → SSE write done → arrival; plus the bench's
// own figure (commit response → arrival). Prints p50/p95/p99 of each, ms.
// ROOT=other checkout: its server (the preload patches that checkout's modules); the loads and
// this probe are this checkout's. On a shared machine alternate two checkouts, same minutes.
//   [ROOT=/path] [RATE=1000] [SECONDS=5] bun bench/probe/pull-sse-stages.ts

import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { BUN, percentile, REPO, tempDir } from "../lib.ts";

const root = process.env.ROOT ?? REPO;
const lib = (await import(`${root}/bench/lib.ts`)) as typeof import("../lib.ts");
const outDir = tempDir("outboxd-sse-stages-");
const out = join(outDir, "stages.json");
const server = await lib.startOutboxd({ PROBE_OUT: out }, "serve", undefined, [
  "--preload",
  join(REPO, "bench/probe/pull-sse-stages-preload.ts"),
]);
const endpoint = (await server.api("POST", "/v1/endpoints", { kind: "pull" })).body.id as string;
const env = { ...process.env, URL: server.url, TOKEN: lib.TOKEN, ENDPOINT: endpoint, MAX: "500" };
const consumer = Bun.spawn({
  cmd: [BUN, join(REPO, "bench/load/pull-stream.ts")],
  env,
  stdout: "pipe",
  stderr: "inherit",
});
const lines = consumer.stdout.pipeThrough(new TextDecoderStream()).getReader();
let buffered = "";
async function line(): Promise<unknown> {
  for (;;) {
    const end = buffered.indexOf("\n");
    if (end >= 0) {
      const text = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      return JSON.parse(text);
    }
    const { done, value } = await lines.read();
    if (done) throw new Error("the stream consumer ended without a line");
    buffered += value;
  }
}
await line(); // {"ready": true}
const generator = Bun.spawn({
  cmd: [BUN, join(REPO, "bench/load/fixed-rate.ts")],
  env: {
    ...env,
    RATE: process.env.RATE ?? "1000",
    SECONDS: process.env.SECONDS ?? "5",
    AGGREGATES: "1000",
    ENDPOINTS: endpoint,
  },
  stdout: "pipe",
  stderr: "inherit",
});
const report = JSON.parse((await new Response(generator.stdout).text()).trim()) as {
  ok: number;
  responses: [string, number][];
};
await generator.exited;
await Bun.sleep(2000); // stragglers, as the bench
consumer.kill("SIGTERM");
const { arrivals } = (await line()) as { arrivals: [string, number][] };
await consumer.exited;
server.child.kill("SIGTERM");
await server.child.exited;
const stages = JSON.parse(await Bun.file(out).text()) as {
  committed: [string, number][];
  leased: [string, number, number][];
  written: [string, number][];
};
await server.stop();
rmSync(outDir, { recursive: true, force: true });

const arrived = new Map(arrivals);
const committed = new Map(stages.committed);
const written = new Map(stages.written);
const leased = new Map(stages.leased.map(([id, began, ended]) => [id, [began, ended] as const]));
const spans: Record<string, number[]> = {
  commitToLease: [],
  lease: [],
  write: [],
  toClient: [],
  commitToArrival: [],
  bench: [],
};
for (const [id, respondedAt] of report.responses) {
  const at = arrived.get(id);
  const commitAt = committed.get(id);
  const lease = leased.get(id);
  const writtenAt = written.get(id);
  if (at === undefined || commitAt === undefined || lease === undefined || writtenAt === undefined) continue;
  spans.commitToLease?.push(lease[0] - commitAt);
  spans.lease?.push(lease[1] - lease[0]);
  spans.write?.push(writtenAt - lease[1]);
  spans.toClient?.push(at - writtenAt);
  spans.commitToArrival?.push(at - commitAt);
  spans.bench?.push(Math.max(0, at - respondedAt));
}
const ms = (v: number) => Math.round(v * 10) / 10;
const row: Record<string, string | number> = {
  root,
  events: spans.bench?.length ?? 0,
  committed: report.ok,
  load: ms(loadavg()[0] ?? 0),
};
for (const [name, values] of Object.entries(spans)) {
  row[name] = [50, 95, 99].map((p) => ms(percentile(values, p))).join("/");
}
console.log(JSON.stringify(row));
