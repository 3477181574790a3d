// CPU per event of one `outboxd serve` committing and delivering at once (issue 12): commits
// offered at RATE/s for SECONDS from a separate process (more than a loaded machine sustains, so
// outboxd works flat out), one endpoint at the bench receiver; the CPU of the serve process and
// of each of its threads from the first commit to the last arrival, divided by the events. Its
// batches grow with its backlog either way, so A/Bs run alternated at the same rate compare like
// with like; steadier than latency on a shared machine. Also the serve process's peak RSS.
//   bun bench/probe/mixed-cpu.ts [rate=3000] [seconds=4] [KEY=VALUE env for outboxd …]
import {
  BUN,
  cpuMs,
  peakRssMb,
  REPO,
  startOutboxd,
  startPeer,
  TOKEN,
  threadCpuMs,
  waitUntil,
} from "../lib.ts";

const rate = Number(process.argv[2] ?? 3000);
const seconds = Number(process.argv[3] ?? 4);
const env = Object.fromEntries(process.argv.slice(4).map((kv) => kv.split("=", 2) as [string, string]));

const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const outboxd = await startOutboxd(env);
await outboxd.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
const count = async () => ((await (await fetch(`${receiver.url}/count`)).json()) as { count: number }).count;
const load = (rate: number, seconds: number) =>
  Bun.spawn({
    cmd: [BUN, "bench/load/fixed-rate.ts"],
    cwd: REPO,
    env: { ...process.env, URL: outboxd.url, TOKEN, RATE: String(rate), SECONDS: String(seconds) },
    stdout: "pipe",
    stderr: "inherit",
  });
const sentOk = async (generator: ReturnType<typeof load>) =>
  (JSON.parse((await new Response(generator.stdout).text()).trim()) as { ok: number }).ok;

// Unmeasured first: JIT and the first statements of every kind.
const warm = await sentOk(load(500, 2));
await waitUntil("the warm-up to arrive", async () => (await count()) >= warm, 120_000);
const cpu0 = cpuMs(outboxd.pid);
const threads0 = threadCpuMs(outboxd.pid);
const started = performance.now();
const events = await sentOk(load(rate, seconds));
await waitUntil("every event to arrive", async () => (await count()) >= warm + events, 600_000);
const ms = performance.now() - started;
const threads: Record<string, number> = {};
for (const [name, used] of Object.entries(threadCpuMs(outboxd.pid))) {
  threads[name] = Math.round(((used - (threads0[name] ?? 0)) / events) * 10000) / 10;
}
console.log(
  JSON.stringify({
    rate,
    seconds,
    env,
    events,
    eventsPerSecond: Math.round((events / ms) * 1000),
    cpuUsPerEvent: Math.round(((cpuMs(outboxd.pid) - cpu0) / events) * 1000),
    cpuUsPerEventByThread: threads,
    peakRssMb: peakRssMb(outboxd.pid),
  }),
);
await outboxd.stop();
await receiver.stop();
