// Real outboxd child processes: started with their own environment, their "listening" log
// line parsed for the URL, really killed by PID.
import { type Subprocess, spawn } from "bun";

export interface Child {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the process wrote to stderr so far (JSON log lines). */
  stderr(): string;
  /** Resolves with the URL of the first `listening` log line. */
  listening(timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  exited: Promise<number>;
}

export const REPO = new URL("../..", import.meta.url).pathname;

export function startChild(args: string[], env: Record<string, string>, cwd = REPO): Child {
  const proc = spawn({
    cmd: args,
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // Only the tail of stderr is kept (a long soak logs a lot); the listening line is kept aside.
  let err = "";
  let listeningLine: RegExpExecArray | null = null;
  const waiters: (() => void)[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) {
      err += decoder.decode(chunk);
      listeningLine ??= /"msg":"listening","url":"([^"]+)","pid":(\d+)/.exec(err);
      if (err.length > 256 * 1024) err = err.slice(-128 * 1024);
      for (const wake of waiters.splice(0)) wake();
    }
    for (const wake of waiters.splice(0)) wake();
  })();
  // Drain stdout so a chatty child never blocks on a full pipe.
  void (async () => {
    for await (const _ of proc.stdout) {
      // discarded
    }
  })();
  return {
    proc,
    stderr: () => err,
    exited: proc.exited,
    kill: (signal = "SIGKILL") => {
      // `npm start` does not pass signals on: also signal the server whose pid it logged.
      const server = listeningLine?.[2];
      if (server && Number(server) !== proc.pid) {
        try {
          process.kill(Number(server), signal);
        } catch {
          // already gone
        }
      }
      if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid, signal);
    },
    async listening(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (listeningLine?.[1]) return listeningLine[1];
        if (proc.exitCode !== null || proc.signalCode !== null) {
          throw new Error(`process exited (${proc.exitCode ?? proc.signalCode}) before listening:\n${err}`);
        }
        if (Date.now() > deadline) throw new Error(`no listening line within ${timeoutMs} ms:\n${err}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
  };
}

/** A port that was free a moment ago on 127.0.0.1 (for servers that must know theirs in advance). */
export async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port as number;
  await probe.stop(true);
  return port;
}

/**
 * Runs a command to its end with only PATH and HOME from this process (plus `env`) and returns its
 * stdout; a non-zero exit throws with the command, its folder and both outputs.
 */
export async function runToEnd(
  cmd: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  const proc = Bun.spawn({
    cmd,
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} failed (${code}) in ${cwd}:\n${out}\n${err}`);
  return out;
}
