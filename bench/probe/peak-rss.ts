// Where outboxd's peak RSS goes in the mixed scenario (issue 12: ≤ 200 MB in every scenario):
// the latency scenario's run (bench/scenarios/latency.ts: one endpoint at the bench receiver,
// open-loop commits, warm-up first), outboxd started with a sampler (peak-rss-preload.ts). Prints
// the peak (VmHWM, what the bench reports) and, at the sample of highest RSS and as each part's
// own maximum: code pages, SQLite's page caches (glibc heap), JavaScriptCore's heap, the rest.
//   bun bench/probe/peak-rss.ts [rate=5000] [seconds=10] [warmup=2] [KEY=VALUE env for outboxd …]
// Run it from each checkout to compare two (the sampler costs both alike).
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUN, peakRssMb, startOutboxd, startPeer, tempDir } from "../lib.ts";
import { fixedRate } from "../scenarios/latency.ts";

const [rate, seconds, warmup] = [5000, 10, 2].map((fallback, i) =>
  Number(process.argv[2 + i] ?? fallback),
) as [number, number, number];
const env = Object.fromEntries(process.argv.slice(5).map((kv) => kv.split("=", 2) as [string, string]));
const samplesDir = tempDir("outboxd-peak-rss-");
const out = join(samplesDir, "samples.jsonl");
const receiver = await startPeer([BUN, "bench/peers/receiver.ts"], {});
const outboxd = await startOutboxd({ ...env, PEAK_RSS_OUT: out }, "serve", undefined, [
  "--preload",
  join(import.meta.dir, "peak-rss-preload.ts"),
]);
try {
  await outboxd.api("POST", "/v1/endpoints", { url: `${receiver.url}/hook` });
  if (warmup) await fixedRate({ url: outboxd.url, receiverUrl: receiver.url, rate, seconds: warmup });
  const result = await fixedRate({ url: outboxd.url, receiverUrl: receiver.url, rate, seconds });
  const samples = readFileSync(out, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, number>);
  const first = samples[0] as Record<string, number>;
  const peak = samples.reduce((a, b) => ((b.rss ?? 0) > (a.rss ?? 0) ? b : a));
  const most = (key: string) => Math.max(...samples.map((s) => s[key] ?? 0));
  const parts = (s: Record<string, number>) => ({
    rss: s.rss,
    file: s.file,
    sqlite: s.sqlite,
    jsHeap: s.jsHeap,
    rest: Math.round(((s.anon ?? 0) - (s.sqlite ?? 0) - (s.jsHeap ?? 0)) * 10) / 10,
    threads: s.threads,
  });
  console.log(
    JSON.stringify({
      env,
      rate,
      seconds,
      committed: result.committed,
      waitingAtStop: result.waitingAtStop,
      peakRssMb: peakRssMb(outboxd.pid),
      atStart: parts(first),
      atPeak: parts(peak),
      maxima: { sqlite: most("sqlite"), jsHeap: most("jsHeap") },
    }),
  );
} finally {
  await outboxd.stop();
  await receiver.stop();
  rmSync(samplesDir, { recursive: true, force: true });
}
