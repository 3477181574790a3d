// Preloaded into the outboxd servers of bench/scenarios/tracing.ts. A second listener
// on TRACING_SWITCH_PORT (127.0.0.1) answers every GET with this process's CPU time so far, whole
// process and main thread, in µs (precise where /proc's 10 ms ticks are not, for short blocks),
// and each thread's in ms with its name (/proc/self/task: JIT, garbage collector helpers, workers).
// In a server with tracing on, GET /?tracing=on|off also switches its hooks (tracingBenchSwitch:
// off, they call straight through as tracing off does; the server-span middleware stays
// installed and calls next()), so that one server under one continuous load can be measured
// with its spans on and off in alternating blocks. The tracing module is loaded only then: a
// server with tracing off keeps none of it.
//   TRACING_SWITCH_PORT=… bun --preload ./bench/probe/tracing-switch.ts src/main.ts serve
import { taskCpuMs } from "../lib.ts";

Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.TRACING_SWITCH_PORT),
  async fetch(request) {
    const mode = new URL(request.url).searchParams.get("tracing");
    if (mode === "on" || mode === "off") {
      const { tracingBenchSwitch } = await import("../../src/ops/tracing-sdk.ts");
      tracingBenchSwitch.off = mode === "off";
    }
    const all = process.cpuUsage();
    const main = process.threadCpuUsage();
    return Response.json({
      cpuMicros: all.user + all.system,
      mainThreadMicros: main.user + main.system,
      tasks: taskCpuMs(process.pid),
    });
  },
});
