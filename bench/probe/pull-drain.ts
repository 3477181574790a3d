// The server's CPU per pulled event (issue 17): TOTAL events over 1,000 aggregates are committed
// to a pull endpoint by one `outboxd serve`, which then stops; a second serve on the same database
// file is drained by 4 pollers in batches of 100 (bench/load/pull-consumers.ts), and only that
// second process's CPU (/proc/PID/stat) during the drain is counted: no preload, no start-up.
// On a shared machine compare µs per event, A/B interleaved (two checkouts, same minutes).
//   bun bench/probe/pull-drain.ts [total=20000]
// PROF_DIR=dir: a CPU profile of the draining server (`bun --cpu-prof --cpu-prof-md`). MAX=n: batch size.
import { rmSync } from "node:fs";
import { BUN, cpuMs, REPO, startOutboxd, TOKEN, tempDir } from "../lib.ts";

const total = Number(process.argv[2] ?? 20_000);
const dir = tempDir("outboxd-pull-drain-");
const filler = await startOutboxd({}, "serve", dir);
const endpoint = (await filler.api("POST", "/v1/endpoints", { kind: "pull" })).body.id as string;
let next = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (next < Math.ceil(total / 100)) {
      const c = next++;
      const events = Array.from({ length: Math.min(100, total - c * 100) }, (_, i) => ({
        type: "bench.pulled",
        aggregate: `bench/${(c * 100 + i) % 1000}`,
        payload: { n: c * 100 + i },
        endpoints: [endpoint],
      }));
      const answer = await filler.api("POST", "/v1/commits", { events });
      if (answer.status !== 201) throw new Error(`preload: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  }),
);
filler.child.kill("SIGTERM");
await filler.child.exited;

const server = await startOutboxd(
  {},
  "serve",
  dir,
  process.env.PROF_DIR ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${process.env.PROF_DIR}`] : [],
);
const cpu0 = cpuMs(server.pid);
const consumers = Bun.spawn({
  cmd: [BUN, "bench/load/pull-consumers.ts"],
  cwd: REPO,
  env: {
    ...process.env,
    URL: server.url,
    TOKEN,
    ENDPOINT: endpoint,
    TOTAL: String(total),
    POLLERS: "4",
    MAX: process.env.MAX ?? "100",
  },
  stdout: "pipe",
  stderr: "inherit",
});
const report = JSON.parse((await new Response(consumers.stdout).text()).trim()) as {
  acked: number;
  seconds: number;
  orderViolations: number;
  holdViolations: number;
};
const cpu = cpuMs(server.pid) - cpu0;
await server.stop();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    events: report.acked,
    eventsPerSecond: Math.round(report.acked / report.seconds),
    serverCpuMicrosPerEvent: Math.round((cpu * 1000) / report.acked),
    orderViolations: report.orderViolations,
    holdViolations: report.holdViolations,
  }),
);
