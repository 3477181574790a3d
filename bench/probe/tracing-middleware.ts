// What the one-server measurement of bench/scenarios/tracing.ts leaves out (issue 18): its "off"
// blocks switch the hooks off in a server with tracing on, so the server-span middleware stays
// installed and calls next(). Three Hono apps in one process, main-thread CPU per request, blocks
// alternated (20 rounds, the order reversed every other round), each request a server span and
// an outboxd.commit span around trivial work, spans to an OTLP sink in another process:
//   none: tracing off (NO_TRACING, no middleware); switchedOff: tracing on, hooks switched off;
//   on: tracing on. Prints the median per-round differences from "none".
//   bun bench/probe/tracing-middleware.ts [rounds=20]
import { Hono } from "hono";
import { NO_TRACING, startTracing, type Tracing } from "../../src/ops/tracing.ts";
import { tracingBenchSwitch } from "../../src/ops/tracing-sdk.ts";
import { BUN, median, startPeer } from "../lib.ts";

const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const on = await startTracing(
  { tracesUrl: `${sink.url}/v1/traces`, serviceName: "hooks", protocol: "http/protobuf" },
  () => {},
);
const describe = () => ({ "outboxd.commit_id": "cmt_000mx5a39id1dbf755beddd5a6eb951", "outboxd.events": 1 });
function makeApp(tracing: Tracing) {
  const app = new Hono();
  const mw = tracing.middleware();
  if (mw) app.use(mw);
  app.use(async (_c, next) => {
    await next();
  });
  app.post("/v1/commits", async (c) => {
    const tp = tracing.requestTraceparent(c.req.raw);
    await tracing.commit(tp, async (t) => t, describe);
    return c.json({ ok: true }, 201);
  });
  return app;
}
const apps = { none: makeApp(NO_TRACING), switchedOff: makeApp(on), on: makeApp(on) };
const headers = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };
const garbage: unknown[] = [];
async function block(name: keyof typeof apps, n: number) {
  tracingBenchSwitch.off = name === "switchedOff";
  const app = apps[name];
  const t = process.threadCpuUsage();
  for (let i = 0; i < n; i++) {
    await app.fetch(new Request("http://outboxd/v1/commits", { method: "POST", headers }));
    // A little garbage, as a server makes around each request.
    for (let k = 0; k < 30; k++) garbage[(i * 30 + k) % 20000] = { i, k };
    if (i % 50 === 49) await Bun.sleep(1); // lets the exporter's answers in
  }
  const u = process.threadCpuUsage(t);
  return (u.user + u.system) / n;
}
const names = ["none", "switchedOff", "on"] as const;
const res: Record<(typeof names)[number], number[]> = { none: [], switchedOff: [], on: [] };
for (let i = 0; i < 6; i++) for (const n of names) await block(n, 3000);
for (let r = 0; r < Number(process.argv[2] ?? 20); r++) {
  const order = r % 2 ? [...names].reverse() : names;
  for (const n of order) res[n].push(await block(n, 3000));
}
await on.shutdown();
const d = (a: (typeof names)[number]) => median(res[a].map((x, i) => x - (res.none[i] ?? x))).toFixed(2);
console.log(
  `main µs/request: none ${median(res.none).toFixed(2)}, switched off +${d("switchedOff")}, on +${d("on")}`,
);
await sink.stop();
