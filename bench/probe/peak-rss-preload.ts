// Loaded into outboxd by bench/probe/peak-rss.ts (bun --preload): every 50 ms, one JSON line on
// PEAK_RSS_OUT with where this process's resident memory is, in MB: rss; file (the bun binary's
// and libsql's code pages); sqlite (glibc's [heap]: only SQLite allocates through glibc here,
// its page caches first; Bun's own allocations and JavaScriptCore's heap are mimalloc's);
// jsHeap (JavaScriptCore's heap capacity, in mimalloc's arena); anon (all anonymous memory).

import { heapStats } from "bun:jsc";
import { appendFileSync, readFileSync } from "node:fs";

const out = process.env.PEAK_RSS_OUT as string;
const mb = (kb: string | undefined) => Math.round(Number(kb ?? 0) / 102.4) / 10;
setInterval(() => {
  const status = readFileSync("/proc/self/status", "utf8");
  const smaps = readFileSync("/proc/self/smaps", "utf8");
  const sqlite = /\[heap\]\n(?:.*\n)*?Rss:\s+(\d+) kB/.exec(smaps)?.[1];
  const sample = {
    at: Date.now(),
    rss: mb(/VmRSS:\s+(\d+)/.exec(status)?.[1]),
    file: mb(/RssFile:\s+(\d+)/.exec(status)?.[1]),
    anon: mb(/RssAnon:\s+(\d+)/.exec(status)?.[1]),
    sqlite: mb(sqlite),
    jsHeap: Math.round(heapStats().heapCapacity / 104857.6) / 10,
    threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1]),
  };
  appendFileSync(out, `${JSON.stringify(sample)}\n`);
}, 50).unref();
