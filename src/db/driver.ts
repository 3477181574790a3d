import type { Op, Outcome } from "./op.ts";

/**
 * What the rest of outboxd needs from a database. Two implementations exist:
 * `engine` (the `libsql` package on a local file, statements prepared once) and
 * `client` (@libsql/client: local files and remote libSQL servers / Turso).
 * Both pass the same test suite (test/db/storage.test.ts).
 */
export interface Driver {
  readonly name: DriverName;
  /** Runs a read-only operation outside the write queue. */
  read<T>(op: Op<T>): Promise<T>;
  /**
   * Runs `op` inside one write transaction (`BEGIN IMMEDIATE` … `COMMIT`), rolling back if it
   * throws; it settles once the COMMIT is durable. Only the Writer calls this, one transaction at a time.
   */
  transaction<T>(op: Op<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Optional: commits a group of re-runnable operations in a few round trips whatever the
   * group's size (the client driver's remote write path, remote-writer.ts). Never throws: one
   * outcome per operation, in order. Only the Writer calls this, one group at a time.
   */
  writeGroup?(ops: GroupedOp[]): Promise<Outcome[]>;
  /**
   * Optional, with writeGroup: groups may overlap. The Writer then starts its next group once
   * this resolves (the group before has read what it needs and sent its writes) instead of once
   * that group's outcomes are known; the driver keeps their writes in order (remote-writer.ts).
   */
  nextGroup?(): Promise<void>;
  /**
   * Runs one statement outside any transaction, on a connection of its own use; for the few
   * statements SQLite refuses inside one (VACUUM INTO for backups).
   */
  executeAlone(sql: string, args?: Record<string, string | number | null>): Promise<void>;
  close(): Promise<void>;
}

export interface GroupedOp {
  op: Op<unknown>;
  /** Makes the operation anew (the first run is `op`). */
  again: () => Op<unknown>;
}

export type DriverName = "engine" | "client";

export interface TransactionOptions {
  /**
   * false: this transaction only changes leases or attempt outcomes and may skip its sync
   * (PRAGMA synchronous = NORMAL for it) even when the database is configured FULL (DESIGN §1.8).
   * Default true.
   */
  durable?: boolean;
}

export interface DriverOptions {
  /** `FULL` survives power loss (one fsync per commit); `NORMAL` may lose the last commits on power loss. */
  synchronous: "FULL" | "NORMAL";
  busyTimeoutMs: number;
}

/** SQL a driver runs once on each local-file connection it opens. */
export function localPragmas(options: DriverOptions): string[] {
  return [
    "PRAGMA journal_mode = WAL",
    `PRAGMA synchronous = ${options.synchronous}`,
    `PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`,
    "PRAGMA foreign_keys = OFF",
    // Savepoint sub-journals in memory, not in a temporary file: one savepoint per grouped commit.
    "PRAGMA temp_store = MEMORY",
    // The default 2 MiB page cache thrashes once the tables outgrow it: every statement then
    // re-reads pages through the WAL index (+7% main-thread CPU per commit after 100,000 commits).
    // 8 MiB per connection keeps the hot b-tree pages: against 32 MiB, the same CPU per commit
    // after 100,000 commits and per delivery in a 20,000 drain, and ~25 MB less peak RSS in the
    // 5,000/s mixed run, where the writer's cache filled with pages appended once and never read.
    "PRAGMA cache_size = -8192",
    // Checkpoint every ~40 MiB of WAL instead of SQLite's 4 MiB: the hot b-tree pages (indexes,
    // the queue heads) rewritten by every commit are copied once per checkpoint, so fewer
    // checkpoints copy far fewer pages. (A worker runs them off the event loop: checkpointer.ts.)
    // Measured interleaved (bench/probe/commits.ts, 64 connections): 4,033-4,381 -> 4,519-4,885
    // commits/s, CPU per commit -7%; a 10,000-delivery drain 1,376-1,569 -> 1,863-2,558/s.
    "PRAGMA wal_autocheckpoint = 10000",
    // ...and give the disk back after a checkpoint that restarted the WAL.
    "PRAGMA journal_size_limit = 67108864",
  ];
}
