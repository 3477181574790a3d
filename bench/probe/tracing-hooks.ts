// What tracing's hooks cost per commit, in process (issue 18): a small Hono app with the
// tracing middleware and a route that runs the commit and deliver hooks around trivial work,
// driven through app.fetch; the process's CPU time (all threads: garbage collection and the
// exporter's requests to an OTLP sink in another process included) per request after a warm-up.
// Variants alternate in fresh child processes, round after round:
//   bun bench/probe/tracing-hooks.ts [requests=100000] [rounds=5]
// off: the NO_TRACING hooks; on: this tree's tracing; with OLD=<tree>, old: that tree's
// src/ops/tracing.ts (the same interface).
import { join } from "node:path";
import { BUN, median, REPO, startPeer } from "../lib.ts";

if (process.argv[2] === "child") {
  const [, , , modulePath, mode, requestsArg, sinkUrl] = process.argv;
  const requests = Number(requestsArg);
  const { Hono } = await import("hono");
  const tracingModule = (await import(modulePath as string)) as typeof import("../../src/ops/tracing.ts");
  const tracing =
    mode === "off"
      ? tracingModule.NO_TRACING
      : await tracingModule.startTracing(
          { tracesUrl: `${sinkUrl}/v1/traces`, serviceName: "hooks", protocol: "http/protobuf" },
          () => {},
        );
  const app = new Hono();
  const middleware = tracing.middleware();
  if (middleware) app.use(middleware);
  const attempt = { eventId: "evt_0", endpointId: "ep_1", aggregate: "orders/1", sequence: 1, attempt: 1 };
  app.post("/v1/commits", async (c) => {
    const traceparent = tracing.requestTraceparent(c.req.raw);
    const stored = await tracing.commit(
      traceparent,
      async (tp) => tp,
      () => ({ "outboxd.commit_id": "cmt_1", "outboxd.events": 1, "outboxd.replayed": false }),
    );
    await tracing.deliver({ ...attempt }, stored ?? null, async () => ({ statusCode: 200, error: null }));
    return c.json({ ok: true }, 201);
  });
  const request = () =>
    app.fetch(
      new Request("http://outboxd/v1/commits", {
        method: "POST",
        headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
      }),
    );
  // Paced: 10 requests a millisecond at most (about twice a saturated server's commit rate), so
  // the exporter keeps up as it would in a server and no span is dropped for a full queue.
  const paced = async (count: number) => {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      await request();
      if (i % 10 === 9) {
        const ahead = i / 10 - (performance.now() - started);
        if (ahead > 0) await Bun.sleep(ahead);
      }
    }
  };
  await paced(20_000);
  const before = process.cpuUsage();
  await paced(requests);
  const used = process.cpuUsage(before);
  await tracing.shutdown();
  console.log(JSON.stringify({ cpuMicrosPerRequest: (used.user + used.system) / requests }));
  process.exit(0);
}

const requests = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 5);
const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const variants: [string, string, string][] = [
  ["off", join(REPO, "src/ops/tracing.ts"), "off"],
  ["on", join(REPO, "src/ops/tracing.ts"), "on"],
];
if (process.env.OLD) variants.push(["old", join(process.env.OLD, "src/ops/tracing.ts"), "on"]);
const results: Record<string, number[]> = Object.fromEntries(variants.map(([name]) => [name, []]));
const exported: Record<string, number[]> = Object.fromEntries(variants.map(([name]) => [name, []]));
const spansAtSink = async () =>
  ((await (await fetch(`${sink.url}/count`)).json()) as { spans: number }).spans;
try {
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < variants.length; k++) {
      const [name, path, mode] = variants[(k + round) % variants.length] as [string, string, string];
      const child = Bun.spawn({
        cmd: [BUN, import.meta.path, "child", path, mode, String(requests), sink.url],
        cwd: REPO,
        stdout: "pipe",
        stderr: "inherit",
      });
      const spansBefore = await spansAtSink();
      const out = await new Response(child.stdout).text();
      await child.exited;
      exported[name]?.push((await spansAtSink()) - spansBefore);
      results[name]?.push(
        (JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { cpuMicrosPerRequest: number })
          .cpuMicrosPerRequest,
      );
    }
  }
} finally {
  await sink.stop();
}
const off = results.off ?? [];
for (const [name] of variants) {
  const runs = results[name] ?? [];
  const added = median(runs.map((x, r) => x - (off[r] ?? x)));
  console.log(
    `${name}: ${median(runs).toFixed(1)} µs CPU per request (runs ${runs.map((x) => x.toFixed(1)).join(", ")}); ` +
      `added vs off, median of rounds: ${added.toFixed(1)} µs; spans exported ${exported[name]?.join(", ")}`,
  );
}
