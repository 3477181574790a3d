// Tracing's CPU per commit, A/B interleaved (issue 18): several outboxd instances run at once,
// each with its own tracing variant, and take the same fixed-rate commit load in turn, round
// after round (rotating order), so the shared machine's drift hits all alike. Reports each
// variant's median CPU µs per commit (user + system, exporter included) and its median paired
// ratio to "off" of the same round. A fixed rate, not saturation: at saturation a slower
// variant also commits in smaller groups, which inflates its CPU per commit beyond its own cost.
//   bun bench/probe/tracing-variants.ts [rate=500] [seconds=3] [rounds=5] [endpoint=0|1]
// Variants: off, on (every span exported to an OTLP sink), on-sampled-off
// (OTEL_TRACES_SAMPLER=always_off: the hooks, ids and traceparent headers, no span recorded).
// VARIANTS=off,on picks some. Not a variant: OTEL_BSP_MAX_QUEUE_SIZE=1 ("recorded, not
// exported"), because every dropped span then logs a diagnostic warning, which costs more than
// the span.
import { BUN, cpuMs, median, startOutboxd, startPeer } from "../lib.ts";
import { fixedRate } from "../scenarios/latency.ts";

const rate = Number(process.argv[2] ?? 500);
const seconds = Number(process.argv[3] ?? 3);
const rounds = Number(process.argv[4] ?? 5);
const withEndpoint = process.argv[5] === "1";

const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const on = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "outboxd-bench" };
const variants: Record<string, Record<string, string>> = {
  off: {},
  on,
  "on-sampled-off": { ...on, OTEL_TRACES_SAMPLER: "always_off" },
};
const names = (process.env.VARIANTS ?? Object.keys(variants).join(",")).split(",");
const servers = await Promise.all(
  names.map((name) => startOutboxd({ OUTBOXD_SYNCHRONOUS: "NORMAL", ...variants[name] })),
);
try {
  if (withEndpoint) {
    for (const server of servers) await server.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
  }
  const cpu: number[][] = names.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const i = (k + round) % names.length;
      const server = servers[i];
      if (!server) continue;
      const before = cpuMs(server.pid);
      const result = await fixedRate({ url: server.url, receiverUrl: receiver.url, rate, seconds });
      // Let the last commits' deliveries and the exporter's batch finish inside the window.
      await Bun.sleep(1500);
      cpu[i]?.push(((cpuMs(server.pid) - before) * 1000) / Math.max(1, result.committed));
    }
  }
  const off = cpu[names.indexOf("off")] ?? [];
  const report = Object.fromEntries(
    names.map((name, i) => [
      name,
      {
        cpuMicrosPerCommit: Math.round(median(cpu[i] ?? [])),
        vsOff: off.length ? +(median((cpu[i] ?? []).map((x, r) => x / (off[r] ?? x))) - 1).toFixed(3) : null,
        runs: (cpu[i] ?? []).map(Math.round),
      },
    ]),
  );
  console.log(JSON.stringify({ rate, seconds, rounds, endpoint: withEndpoint, report }, null, 1));
} finally {
  for (const server of servers) await server.stop();
  await receiver.stop();
  await sink.stop();
}
