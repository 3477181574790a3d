// A CPU profile of outboxd under the tracing bench's load (issue 18): one server, tracing on
// (OTLP to a sink on this machine) or off, 64 connections for N seconds, every commit with a
// sampled traceparent; bun --cpu-prof writes the profile (and its markdown) when it exits.
//   bun bench/probe/tracing-profile.ts on|off [seconds=6] [endpoint=0|1] [dir=/tmp/outboxd-prof]
import { BUN, load, startOutboxd, startPeer, TOKEN } from "../lib.ts";
import { COMMIT_BODY } from "../scenarios/commit.ts";

const on = process.argv[2] !== "off";
const seconds = Number(process.argv[3] ?? 6);
const withEndpoint = process.argv[4] === "1";
const dir = process.argv[5] ?? "/tmp/outboxd-prof";
const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const env: Record<string, string> = { OUTBOXD_SYNCHRONOUS: "NORMAL" };
if (on) Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "outboxd-bench" });
const server = await startOutboxd(env, "serve", undefined, [
  "--cpu-prof",
  "--cpu-prof-md",
  `--cpu-prof-dir=${dir}`,
  `--cpu-prof-name=${on ? "on" : "off"}${withEndpoint ? "-endpoint" : ""}.cpuprofile`,
]);
try {
  if (withEndpoint) await server.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
  const result = await load({
    url: `${server.url}/v1/commits`,
    connections: 64,
    seconds,
    body: COMMIT_BODY,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    },
  });
  console.log(JSON.stringify({ on, withEndpoint, commitsPerSecond: result.requestsPerSecond }));
} finally {
  await server.stop();
  await receiver.stop();
  await sink.stop();
}
