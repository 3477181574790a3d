// Hands a local database's WAL checkpoints to a Worker (checkpoint-worker.ts). A checkpoint copies
// the WAL's pages into the database file and fsyncs both: inside a COMMIT on the event loop that
// stalled every request and delivery for 30-65 ms every ~10,000 frames (~16,000 one-record
// commits). Until the worker is ready, and again if it fails, the writer's own automatic
// checkpoints run as before (localPragmas); while it works, the writer's threshold is only a
// backstop for a worker that cannot keep up.

import { closeSync } from "node:fs";

/** What the worker needs to start. */
export interface CheckpointerStart {
  path: string;
  busyTimeoutMs: number;
  synchronous: "FULL" | "NORMAL";
  /** Checkpoint once this many frames wait in the WAL (the writer's own threshold, localPragmas). */
  frames: number;
  /** How often the worker looks at the WAL's size (a read of its index header). */
  intervalMs: number;
}

/**
 * `shmFd`: the descriptor of the -shm file the worker read the WAL index through, handed back for
 * this side to close (release) once every connection of the process to the database is closed.
 * POSIX locks belong to the process, and closing ANY descriptor of a file drops every lock the
 * process holds on it, SQLite's included: the -shm's, which tell other processes this one is
 * attached (one that thinks itself alone resets the -shm under our mapping: SIGBUS).
 */
export type CheckpointerMessage =
  | { kind: "ready" }
  | { kind: "checkpointed"; checkpoints: number }
  | { kind: "stopped"; shmFd: number | null }
  | { kind: "failed"; error: string; code: string | undefined; shmFd: number | null };

/** The frames after which a checkpoint runs (the value of wal_autocheckpoint in localPragmas). */
export const CHECKPOINT_FRAMES = 10_000;
/** The writer's own threshold while the worker checkpoints: only if the worker falls behind. */
export const BACKSTOP_FRAMES = 3 * CHECKPOINT_FRAMES;
const POLL_MS = 100;
/** The worker's module (scripts/build.ts names it as an entry point of the executable too). */
const ENTRY = new URL("./checkpoint-worker.ts", import.meta.url);
/** How long stop() waits for the worker to close its connection before ending it. */
const STOP_WAIT_MS = 2_000;

export interface CheckpointerHooks {
  /** The worker checkpoints from now on: raise the writer's threshold to the backstop. */
  ready(): void;
  /**
   * The worker is gone (failed): the writer checkpoints again itself. `code`: the SQLite code of
   * its error, which may be fatal (storage-errors.ts).
   */
  gone(error: string, code?: string): void;
}

export class Checkpointer {
  #worker: Worker | null;
  #checkpoints = 0;
  #ready = false;
  #stopped: (() => void) | null = null;
  #shmFd: number | null = null;
  readonly #hooks: CheckpointerHooks;

  constructor(options: Omit<CheckpointerStart, "frames" | "intervalMs">, hooks: CheckpointerHooks) {
    this.#hooks = hooks;
    let worker: Worker;
    try {
      worker = new Worker(ENTRY, { type: "module", smol: true } as WorkerOptions);
    } catch (error) {
      this.#worker = null;
      hooks.gone(String(error));
      return;
    }
    this.#worker = worker;
    // It must not keep the process alive on its own.
    (worker as { unref?: () => void }).unref?.();
    worker.onmessage = (event: MessageEvent) => this.#heard(event.data as CheckpointerMessage);
    worker.onerror = (event: ErrorEvent) => this.#fail(event.message);
    const start: CheckpointerStart = { ...options, frames: CHECKPOINT_FRAMES, intervalMs: POLL_MS };
    worker.postMessage({ kind: "start", options: start });
  }

  /** Checkpoints the worker has run (for tests). */
  get checkpoints(): number {
    return this.#checkpoints;
  }

  /** Whether the worker is checkpointing (for tests). */
  get working(): boolean {
    return this.#ready && this.#worker !== null;
  }

  /** Closes the worker's connection and ends it. */
  async stop(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      const timeout = setTimeout(resolve, STOP_WAIT_MS);
      this.#stopped = () => {
        clearTimeout(timeout);
        resolve();
      };
      worker.postMessage({ kind: "stop" });
    });
    this.#worker = null;
    worker.terminate();
  }

  /**
   * Closes the -shm descriptor the worker read (CheckpointerMessage says why here). Only once every
   * connection of this process to the database is closed: after stop() and the connections' close.
   */
  release(): void {
    if (this.#shmFd !== null) closeSync(this.#shmFd);
    this.#shmFd = null;
  }

  #heard(message: CheckpointerMessage): void {
    switch (message.kind) {
      case "ready":
        this.#ready = true;
        this.#hooks.ready();
        return;
      case "checkpointed":
        this.#checkpoints = message.checkpoints;
        return;
      case "stopped":
        this.#shmFd = message.shmFd;
        this.#stopped?.();
        return;
      case "failed":
        this.#shmFd = message.shmFd;
        this.#fail(message.error, message.code);
        return;
    }
  }

  #fail(error: string, code?: string): void {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = null;
    this.#ready = false;
    worker.terminate();
    this.#stopped?.();
    this.#hooks.gone(error, code);
  }
}
