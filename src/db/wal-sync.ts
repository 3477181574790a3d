// Durability of a local database file's commits without blocking the event loop.
//
// With `synchronous = FULL`, SQLite fsyncs the WAL inside COMMIT: on the engine driver that is a
// synchronous call, so every group commit stopped the whole process (HTTP, the dispatcher's
// sends) for the length of an fsync. Instead the writer connection commits with
// `synchronous = NORMAL` (the frames are written to the WAL, not synced) and this module syncs
// the WAL file on libuv's thread pool; the Writer acknowledges a durable batch only once a sync
// that began after its COMMIT has finished. That is the same promise FULL makes: an
// acknowledged commit survives power loss. A sync covers every COMMIT written before it began
// (fdatasync is per file, whichever descriptor wrote), so commits that arrive while one runs
// share the next one: at most one is running and one waiting.
//
// What changes is visibility before durability: another connection can read a commit in the
// moments between its COMMIT and its sync. No outcome acted upon may depend on such a read:
// the Writer holds back the results of every later batch (claims, completions) until the
// durable batches before it are synced, so the dispatcher never sends an event whose commit
// could still be lost (docs/reliability.md).
//
// On the writer thread (OUTBOXD_WRITER_THREAD=worker, writer-thread.ts) the sync blocks that
// thread instead: nothing else waits on it there but the writes, and durable ones wait for the
// sync anyway (Writer: holdForSync). Handing each sync to the pool cost the thread that asked
// ~50-90 µs of CPU per call (waking a pool thread on this kind of VM) and the pool's answer woke
// it again: the blocking sync cut the process's CPU per commit by 14% in process (200 against
// 234 µs, commits alone, 64 in flight) and per event by 2-8% in the mixed scenario, with no
// loss of latency (bench/probe/writer-thread-commits.ts, writer-thread-ab.ts, issue 12 session 9).
import { close as closeFile, closeSync, fdatasync, fdatasyncSync, open as openFile, openSync } from "node:fs";
import { promisify } from "node:util";
import { isMainThread } from "node:worker_threads";

const openAsync = promisify(openFile);
const syncAsync = promisify(fdatasync);
const closeAsync = promisify(closeFile);

/** Whether syncs block this thread: on a thread of its own, the writer's (see the header). */
const BLOCKING = !isMainThread;

export class WalSync {
  readonly #path: string;
  readonly #blocking: boolean;
  /** The WAL's descriptor for blocking syncs, opened at the first. */
  #blockingFd: number | null = null;
  #fd: Promise<number> | null = null;
  /** The sync running now. */
  #running: Promise<void> | null = null;
  /** The one after it, for the commits made since it began. */
  #waiting: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | null = null;
  /** Settles once every durable commit so far is synced. */
  #latest: Promise<void> = Promise.resolve();
  /** Syncs begun (for tests: a durable commit must have caused one). */
  syncs = 0;
  /** Syncs finished (for tests: the writer thread reports it with its answers, writer-thread.ts). */
  synced = 0;

  constructor(walPath: string, blocking = BLOCKING) {
    this.#path = walPath;
    this.#blocking = blocking;
  }

  /** Resolves once every COMMIT made before this call is on disk. */
  afterCommit(): Promise<void> {
    if (this.#blocking) return this.#syncNow();
    let promise: Promise<void>;
    if (!this.#running) {
      promise = this.#start();
    } else {
      if (!this.#waiting) {
        let resolve!: () => void;
        let reject!: (error: unknown) => void;
        const waiting = new Promise<void>((yes, no) => {
          resolve = yes;
          reject = no;
        });
        this.#waiting = { promise: waiting, resolve, reject };
      }
      promise = this.#waiting.promise;
    }
    this.#latest = promise;
    // Whoever awaits it hears a failure; nobody else must see it as unhandled.
    promise.catch(() => {});
    return promise;
  }

  /** Resolves once every commit that asked for a sync before this call is on disk. */
  settled(): Promise<void> {
    return this.#latest;
  }

  async close(): Promise<void> {
    await this.#latest.catch(() => {});
    if (this.#blockingFd !== null) closeSync(this.#blockingFd);
    this.#blockingFd = null;
    const fd = this.#fd;
    this.#fd = null;
    if (fd) await closeAsync(await fd).catch(() => {});
  }

  /** A blocking sync: every COMMIT so far is on disk when it returns (an error rejects). */
  #syncNow(): Promise<void> {
    this.syncs += 1;
    try {
      // Opened at the first sync, as #start's: by then a COMMIT has created the WAL file.
      this.#blockingFd ??= openSync(this.#path, "r+");
      fdatasyncSync(this.#blockingFd);
    } catch (error) {
      return Promise.reject(error);
    }
    this.synced += 1;
    return Promise.resolve();
  }

  #start(): Promise<void> {
    this.syncs += 1;
    // Opened at the first sync: by then a COMMIT has created the WAL file. The descriptor stays
    // open with the database (the WAL is never deleted while a connection to it is open).
    if (!this.#fd) {
      const opened = openAsync(this.#path, "r+");
      // A failed open is tried again at the next sync.
      opened.catch(() => {
        if (this.#fd === opened) this.#fd = null;
      });
      this.#fd = opened;
    }
    const fd = this.#fd;
    const run = (async () => {
      await syncAsync(await fd);
      this.synced += 1;
    })();
    this.#running = run;
    const next = () => {
      this.#running = null;
      const waiting = this.#waiting;
      this.#waiting = null;
      if (waiting) this.#start().then(waiting.resolve, waiting.reject);
    };
    run.then(next, next);
    return run;
  }
}
