// Named failpoints (DESIGN §7) for the crash drills: when enabled, reaching one kills the
// process on the spot with SIGKILL (no cleanup, no flush), exactly like a power cut of the
// process. Off unless OUTBOXD_FAILPOINTS names them and OUTBOXD_ALLOW_FAILPOINTS=1 (config
// refuses the first without the second). Process-wide on purpose: a crash is process-wide.
import type { FAILPOINTS } from "./config.ts";

export type FailpointName = (typeof FAILPOINTS)[number];

const enabled = new Set<string>();

export function enableFailpoints(names: readonly string[]): void {
  for (const name of names) enabled.add(name);
}

export function failpoint(name: FailpointName): void {
  if (enabled.size > 0 && enabled.has(name)) {
    process.stderr.write(`failpoint ${name}: killing the process\n`);
    process.kill(process.pid, "SIGKILL");
  }
}
