// Tracing's CPU per commit with the whole commit path, in process (issue 18), so that a shared,
// busy machine weighs on every variant alike: each variant is a fresh child process running
// outboxd (createOutboxd) and committing through the app's own fetch handler (no sockets, no
// load generator on the cores), 64 requests in flight, every commit with a sampled traceparent,
// NORMAL durability; CPU time (user + system, every thread: garbage collector and exporter
// included) per commit over blocks of commits, and the main thread alone. Variants alternate,
// round after round, in a rotating order; the report gives each one's median and the median of
// its paired ratios to "off" of the same round.
//   bun bench/probe/tracing-inprocess.ts [rounds=5] [blocks=4] [commits=2000] [endpoint=0|1]
// Variants (VARIANTS=…): off, on (spans exported to an OTLP sink in another process),
// on-sampled-off (OTEL_TRACES_SAMPLER=always_off), off-again; with OLD=<tree> (a checkout of
// another commit, node_modules linked) old-on and old-off. With endpoint=1 each commit's event
// is delivered to a receiver in another process, inside its block's time.
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUN, median, REPO, startPeer, tempDir } from "../lib.ts";

const TOKEN = "bench-tracing-inprocess";
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

if (process.argv[2] === "child") {
  const [, , , tree = REPO, blocksArg, commitsArg, endpoint, receiverUrl] = process.argv;
  const { createOutboxd } = (await import(join(tree, "src/app.ts"))) as typeof import("../../src/app.ts");
  const { loadConfig } = (await import(join(tree, "src/config.ts"))) as typeof import("../../src/config.ts");
  const { COMMIT_BODY } = (await import(
    join(tree, "bench/scenarios/commit.ts")
  )) as typeof import("../scenarios/commit.ts");
  const dir = tempDir("outboxd-tracing-inprocess-");
  const outboxd = await createOutboxd(
    loadConfig({
      ...process.env,
      OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
      OUTBOXD_ADMIN_TOKEN: TOKEN,
      OUTBOXD_LOG_LEVEL: "error",
      OUTBOXD_RATE_LIMIT: "0",
      OUTBOXD_SYNCHRONOUS: "NORMAL",
      OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
    }),
    { dispatch: endpoint === "1" },
  );
  const call = (path: string, body: string) =>
    outboxd.http.fetch(
      new Request(`http://outboxd${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKEN}`,
          "content-type": "application/json",
          traceparent: TRACEPARENT,
        },
        body,
      }),
    );
  if (endpoint === "1") {
    const created = await call("/v1/endpoints", JSON.stringify({ url: `${receiverUrl}/hook` }));
    if (created.status !== 201) throw new Error(`endpoint: ${created.status} ${await created.text()}`);
  }
  let next = 0;
  const commit = async () => {
    const response = await call("/v1/commits", COMMIT_BODY.replaceAll("[<id>]", String(next++)));
    if (response.status !== 201)
      throw new Error(`commit answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  const block = async (count: number) => {
    const each = Math.ceil(count / 64);
    const before = process.cpuUsage();
    const beforeThread = process.threadCpuUsage();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = 0; i < each; i++) await commit();
      }),
    );
    // The block's deliveries (and its spans' export) are its own cost.
    if (endpoint === "1") await Bun.sleep(400);
    const used = process.cpuUsage(before);
    const thread = process.threadCpuUsage(beforeThread);
    const n = each * 64;
    return { all: (used.user + used.system) / n, main: (thread.user + thread.system) / n };
  };
  await block(Number(process.env.WARMUP ?? 1000));
  const all: number[] = [];
  const main: number[] = [];
  for (let i = 0; i < Number(blocksArg); i++) {
    const us = await block(Number(commitsArg));
    all.push(us.all);
    main.push(us.main);
  }
  await outboxd.stop();
  rmSync(dir, { recursive: true, force: true });
  if (process.env.THREADS) {
    // CPU ms by thread name over the whole run (/proc/self/task), to see where off-thread time goes.
    const threads: Record<string, number> = {};
    for (const task of readdirSync("/proc/self/task")) {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      threads[name] = (threads[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10;
    }
    console.error(JSON.stringify(threads));
  }
  console.log(JSON.stringify({ all: median(all), main: median(main) }));
  process.exit(0);
}

const rounds = Number(process.argv[2] ?? 5);
const blocks = Number(process.argv[3] ?? 4);
const commits = Number(process.argv[4] ?? 2000);
const endpoint = process.argv[5] === "1";
const sink = await startPeer([BUN, "bench/peers/otlp-sink.ts"], {});
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const on = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "outboxd-bench" };
const old = process.env.OLD;
const variants: Record<string, { env: Record<string, string>; tree: string }> = {
  off: { env: {}, tree: REPO },
  on: { env: on, tree: REPO },
  "on-sampled-off": { env: { ...on, OTEL_TRACES_SAMPLER: "always_off" }, tree: REPO },
  "off-again": { env: {}, tree: REPO },
  ...(old ? { "old-on": { env: on, tree: old }, "old-off": { env: {}, tree: old } } : {}),
};
const names = (process.env.VARIANTS ?? "off,on,off-again").split(",");
const all: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const main: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
try {
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round) % names.length] as string;
      const variant = variants[name];
      if (!variant) throw new Error(`unknown variant ${name}`);
      const child = Bun.spawn({
        cmd: [
          BUN,
          join(REPO, "bench/probe/tracing-inprocess.ts"),
          "child",
          variant.tree,
          String(blocks),
          String(commits),
          endpoint ? "1" : "0",
          receiver.url,
        ],
        cwd: variant.tree,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...variant.env },
        stdout: "pipe",
        stderr: "inherit",
      });
      const out = await new Response(child.stdout).text();
      await child.exited;
      const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { all: number; main: number };
      all[name]?.push(result.all);
      main[name]?.push(result.main);
    }
  }
} finally {
  await receiver.stop();
  await sink.stop();
}
const paired = (xs: number[], base: number[]) => median(xs.map((x, r) => x / (base[r] ?? x))) - 1;
console.log(`rounds ${rounds} × ${blocks} blocks of ${commits} commits, endpoint ${endpoint}`);
for (const name of names) {
  const a = all[name] ?? [];
  const m = main[name] ?? [];
  console.log(
    `${name.padEnd(15)} CPU µs/commit ${median(a).toFixed(1)} (${(paired(a, all.off ?? []) * 100).toFixed(1)}% vs off; ` +
      `runs ${a.map((x) => x.toFixed(0)).join(" ")}), main thread ${median(m).toFixed(1)} (${(paired(m, main.off ?? []) * 100).toFixed(1)}%)`,
  );
}
