// One outboxd serve under the tracing bench's load (64 connections, no traceparent, NORMAL) for
// PROFILE_SECONDS after 3 s of warm-up: commits/s, CPU µs per commit (whole process, /proc ticks)
// and spans exported. Mode: off, on (traceidratio 0.1) or a ratio. With a directory, serve runs
// under `bun --cpu-prof-md` and writes its main thread's profile there on exit.
//   bun bench/probe/tracing-profile.ts [off|on|0.5] [profile-dir]
import { BUN, saturate, startOutboxd, startPeer, TOKEN } from "../lib.ts";
import { COMMIT_BODY } from "../scenarios/commit.ts";

const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const mode = process.argv[2] ?? "off";
const prof = process.argv[3];
const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const env: Record<string, string> = { OUTBOXD_SYNCHRONOUS: "NORMAL" };
if (mode !== "off") {
  Object.assign(env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_TRACES_SAMPLER: "traceidratio",
    OTEL_TRACES_SAMPLER_ARG: mode === "on" ? "0.1" : mode,
  });
}
const runtime = prof ? ["--cpu-prof-md", `--cpu-prof-dir=${prof}`, "--cpu-prof-interval=200"] : [];
const server = await startOutboxd(env, "serve", undefined, runtime);
const load = saturate({
  url: `${server.url}/v1/commits`,
  connections: 64,
  body: COMMIT_BODY,
  headers: { authorization: `Bearer ${TOKEN}` },
});
const cpu = () => {
  const t = require("node:fs").readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(t[11]) + Number(t[12])) * 10; // ms
};
await Bun.sleep(3000);
const a0 = load.answered();
const c0 = cpu();
const t0 = performance.now();
await Bun.sleep(seconds * 1000);
const a1 = load.answered();
const c1 = cpu();
const t1 = performance.now();
await load.stop();
const spans = ((await (await fetch(`${sink.url}/count`)).json()) as { spans: number }).spans;
const child = server.child;
await server.stop();
const timings = /TIMINGS (.*)/.exec(child.stderr());
if (timings) console.log(timings[1]);
await sink.stop();
console.log(
  JSON.stringify({
    mode,
    commitsPerSecond: Math.round(((a1 - a0) * 1000) / (t1 - t0)),
    cpuUsPerCommit: +(((c1 - c0) * 1000) / (a1 - a0)).toFixed(1),
    spans,
    failed: load.failed(),
  }),
);
