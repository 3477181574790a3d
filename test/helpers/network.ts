// A SIMULATED network between outboxd and a remote libSQL server, for tests and benchmarks only.
// No libSQL server can be installed on the development and CI hosts, so the remote write path
// runs through @libsql/client on a local `file:` database, wrapped here. The wrapper counts the
// requests Hrana-over-HTTP would send (one per `execute`, `batch` or `executeMultiple`, and per
// statement, commit or rollback of an interactive transaction, whose BEGIN rides with its first
// statement), waits a fixed delay on each (the round trip), and can lose one on purpose, before
// it reaches the database or after (the answer lost: the outcome unknown to the client).
// What it does not simulate: bandwidth, the server's own work, the lock held across an
// interactive transaction's round trips by ANOTHER process's network (each process waits its own
// delay, so a lock held across round trips is held that long here too).
//
// The client wrapped is whatever the driver opened: @libsql/client on the local file (the tests'
// default: each process runs the requests itself), or its HTTP client talking Hrana to a libSQL
// server (sqld on 127.0.0.1: the benchmark and the round-trip suite, OUTBOXD_DATABASE_URL=http://…).
import type { Client, Transaction } from "@libsql/client";
import { clientSeam } from "../../src/db/client-driver.ts";

export type RequestKind = "execute" | "read-batch" | "write-batch" | "batch" | "tx-statement" | "tx-end";

export interface Network {
  /** Requests sent so far, by kind. */
  counts: Record<RequestKind, number>;
  /** Time spent executing them on the database (the "server"), ms, by kind: the delay excluded. */
  serverMs: Record<RequestKind, number>;
  /** Statements they carried, by kind. */
  statements: Record<RequestKind, number>;
  /** Requests answered with an error (a write batch whose guard failed, say), by kind. */
  failed: Record<RequestKind, number>;
  /** Every request's kind as it reached the database ("sent") and as it was answered, in order. */
  trace: string[];
  total(): number;
  reset(): void;
  /** The next request of this kind fails: before it reaches the database, or after it ran there. */
  failNext(kind: RequestKind, when: "before" | "after"): void;
  /** Runs `action` (another machine's write, say) just before the next request of this kind is sent. */
  beforeNext(kind: RequestKind, action: () => Promise<void> | void): void;
  /** Runs `action` once the next request of this kind has been answered, before its caller hears. */
  afterNext(kind: RequestKind, action: () => Promise<void> | void): void;
  /** Stops wrapping new clients. */
  uninstall(): void;
}

export class SimulatedNetworkError extends Error {}

/** Wraps every client the client driver opens from now on. */
export function installNetwork(options: { delayMs: number }): Network {
  const counts = emptyCounts();
  const serverMs = emptyCounts();
  const statements = emptyCounts();
  const failed = emptyCounts();
  const trace: string[] = [];
  const failures: { kind: RequestKind; when: "before" | "after" }[] = [];
  const actions: { kind: RequestKind; action: () => Promise<void> | void }[] = [];
  const afterActions: { kind: RequestKind; action: () => Promise<void> | void }[] = [];
  const request = async <T>(kind: RequestKind, send: () => Promise<T>, carried = 1): Promise<T> => {
    counts[kind] += 1;
    statements[kind] += carried;
    if (options.delayMs > 0) await Bun.sleep(options.delayMs);
    const hook = actions.findIndex((a) => a.kind === kind);
    if (hook >= 0) await actions.splice(hook, 1)[0]?.action();
    const at = failures.findIndex((f) => f.kind === kind);
    const failure = at >= 0 ? failures.splice(at, 1)[0] : undefined;
    if (failure?.when === "before")
      throw new SimulatedNetworkError(`simulated: ${kind} request lost on the way`);
    const started = performance.now();
    let result: T;
    // (a long run keeps only the latest)
    if (trace.length > 10_000) trace.splice(0, 5_000);
    trace.push(`${kind} sent`);
    try {
      result = await send();
    } catch (error) {
      failed[kind] += 1;
      trace.push(`${kind} failed`);
      throw error;
    }
    trace.push(`${kind} answered`);
    const after = afterActions.findIndex((a) => a.kind === kind);
    if (after >= 0) await afterActions.splice(after, 1)[0]?.action();
    serverMs[kind] += performance.now() - started;
    if (failure?.when === "after")
      throw new SimulatedNetworkError(`simulated: ${kind} answer lost on the way back`);
    return result;
  };

  const wrapTransaction = (tx: Transaction): Transaction =>
    new Proxy(tx, {
      get(target, property) {
        if (property === "execute" || property === "batch" || property === "executeMultiple") {
          return (...args: unknown[]) =>
            request(
              "tx-statement",
              () => (target[property] as (...a: unknown[]) => Promise<unknown>)(...args),
              property === "batch" ? (args[0] as unknown[]).length : 1,
            );
        }
        if (property === "commit" || property === "rollback") {
          return () => request("tx-end", () => target[property]());
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });

  // A Client, or the remote path's batcher (src/db/hrana-batch.ts), which has only `batch`.
  clientSeam.wrap = <C extends object>(wrapped: C): C => {
    const client = wrapped as unknown as Client;
    return new Proxy(client, {
      get(target, property) {
        if (property === "execute" || property === "executeMultiple") {
          return (...args: unknown[]) =>
            request("execute", () => (target[property] as (...a: unknown[]) => Promise<unknown>)(...args));
        }
        if (property === "batch") {
          return (batch: Parameters<Client["batch"]>[0], mode?: Parameters<Client["batch"]>[1]) =>
            request(
              mode === "read" ? "read-batch" : mode === "write" ? "write-batch" : "batch",
              () => target.batch(batch, mode),
              batch.length,
            );
        }
        if (property === "transaction") {
          // Hrana sends BEGIN with the transaction's first statement: opening it costs no request.
          return async (mode?: "write" | "read" | "deferred") =>
            wrapTransaction(await target.transaction(mode));
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as unknown as C;
  };

  return {
    counts,
    serverMs,
    statements,
    failed,
    trace,
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    reset() {
      for (const record of [counts, serverMs, statements, failed]) Object.assign(record, emptyCounts());
      trace.length = 0;
    },
    failNext(kind, when) {
      failures.push({ kind, when });
    },
    beforeNext(kind, action) {
      actions.push({ kind, action });
    },
    afterNext(kind, action) {
      afterActions.push({ kind, action });
    },
    uninstall() {
      clientSeam.wrap = null;
    },
  };
}

function emptyCounts(): Record<RequestKind, number> {
  return { execute: 0, "read-batch": 0, "write-batch": 0, batch: 0, "tx-statement": 0, "tx-end": 0 };
}
