// Where one thread of a drain goes, from `perf` samples with the JIT's own names:
// bench/probe/drain.ts with PERF=file records one thread of the dispatcher (`perf record -g`, at
// the default frequency; frame pointers work in bun.exe and in JSC's code) with JSC's JITDump on;
// this reads the dump's code-load records into /tmp/perf-<pid>.map (what `perf report` and `perf
// script` look JIT addresses up in), then splits the samples: inside JS (a JIT frame on the stack:
// JIT code itself, native code it called, page faults) or outside (the event loop, the sockets'
// syscalls), and names the JS function closest to each native call site with its sample count.
// The JSC sampling profiler (bun:jsc, --cpu-prof, --cpu-prof-md) took ~200 samples in 3 s here and
// weights each by the gap before it: use this instead. bun.exe has no symbols: native call sites are
// addresses, named by the JS function that calls them (JSON.parse in the writer's answers, …).
//   bun bench/probe/perf-split.ts PERF_DATA JITDUMP_DIR [top=16]
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [data, dumps, topText] = process.argv.slice(2);
if (!data || !dumps) throw new Error("usage: bun bench/probe/perf-split.ts PERF_DATA JITDUMP_DIR [top]");
const top = Number(topText ?? 16);

// JITDump (tools/perf/Documentation/jitdump-specification.txt): a header, then records; a code load
// (id 0) is header(id u32, size u32, timestamp u64), pid u32, tid u32, vma u64, code_addr u64,
// code_size u64, code_index u64, a NUL-ended name, the code.
for (const file of readdirSync(dumps).filter((f) => f.startsWith("jit-") && f.endsWith(".dump"))) {
  const bytes = readFileSync(join(dumps, file));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerSize = view.getUint32(8, true);
  const pid = view.getUint32(20, true);
  const lines: string[] = [];
  for (let at = headerSize; at + 16 <= bytes.length; ) {
    const id = view.getUint32(at, true);
    const size = view.getUint32(at + 4, true);
    if (size === 0) break;
    if (id === 0) {
      const address = view.getBigUint64(at + 32, true);
      const codeSize = view.getBigUint64(at + 40, true);
      const nameStart = at + 56;
      const name = bytes.toString("utf8", nameStart, bytes.indexOf(0, nameStart));
      lines.push(`${address.toString(16)} ${codeSize.toString(16)} ${name}`);
    }
    at += size;
  }
  writeFileSync(`/tmp/perf-${pid}.map`, `${lines.join("\n")}\n`);
}

const script = spawnSync("perf", ["script", "-i", data], { encoding: "utf8", maxBuffer: 1 << 30 }).stdout;
const isJit = (frame: string) => frame.includes("/tmp/perf-");
const jsName = (frame: string) => /\s(\S.*?)\+0x[0-9a-f]+ \(\/tmp\/perf/.exec(frame)?.[1] ?? "?";
const split = new Map<string, number>();
const sites = new Map<string, Map<string, number>>();
const add = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
let n = 0;
for (const sample of script.split("\n\n")) {
  const frames = sample
    .split("\n")
    .slice(1)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (frames.length === 0) continue;
  n++;
  const topFrame = frames[0] as string;
  const inJs = frames.some(isJit);
  const where = topFrame.includes("kernel")
    ? / (\S*page_fault)/.test(frames.join(" "))
      ? "kernel: page faults"
      : /sendto|sendmsg/.test(frames.join(" "))
        ? "kernel: send"
        : /recvfrom|recvmsg/.test(frames.join(" "))
          ? "kernel: recv"
          : /epoll/.test(frames.join(" "))
            ? "kernel: epoll"
            : "kernel: other"
    : isJit(topFrame)
      ? "JIT code"
      : topFrame.includes("libc")
        ? "libc"
        : "native";
  add(split, `${inJs ? "in JS " : "outside JS"}  ${where}`);
  // The native call site right above the innermost JIT frame, by the JS function that made it
  // (through JSC's call thunks to the function that called them).
  const first = frames.findIndex(isJit);
  if (first <= 0) continue;
  let caller = jsName(frames[first] as string);
  if (/Thunk/.test(caller)) {
    const named = frames.slice(first + 1).find((f) => isJit(f) && !/Thunk/.test(jsName(f)));
    if (named) caller = `${jsName(named)} (via a thunk)`;
  }
  const site = (frames[first - 1] as string).split(/\s+/)[0] as string;
  let bySite = sites.get(caller);
  if (!bySite) {
    bySite = new Map();
    sites.set(caller, bySite);
  }
  add(bySite, site);
}
const pct = (k: number) => `${((k / n) * 100).toFixed(1).padStart(5)}%`;
console.log(`${n} samples`);
for (const [key, k] of [...split].sort((a, b) => b[1] - a[1])) console.log(`${pct(k)}  ${key}`);
console.log("\nnative code called from JS, by the calling JS function: call sites (samples)");
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
for (const [caller, bySite] of [...sites].sort((a, b) => total(b[1]) - total(a[1])).slice(0, top)) {
  const list = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 6);
  console.log(`${pct(total(bySite))}  ${caller}: ${list.map(([s, k]) => `${s} ${k}`).join(", ")}`);
}
