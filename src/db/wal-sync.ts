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
import { close as closeFile, fdatasync, open as openFile } from "node:fs";
import { promisify } from "node:util";

const openAsync = promisify(openFile);
const syncAsync = promisify(fdatasync);
const closeAsync = promisify(closeFile);

export class WalSync {
  readonly #path: string;
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

  constructor(walPath: string) {
    this.#path = walPath;
  }

  /** Resolves once every COMMIT made before this call is on disk. */
  afterCommit(): Promise<void> {
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
    const fd = this.#fd;
    this.#fd = null;
    if (fd) await closeAsync(await fd).catch(() => {});
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
