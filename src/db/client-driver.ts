// @libsql/client: serves remote libSQL servers (`libsql://`, `http(s)://`: sqld, Turso) and,
// when selected, local `file:` URLs. Every execute prepares its statement anew, which is why
// local files default to the engine driver. Re-runnable operations (commits, claims,
// completions) go through the remote write path, a few round trips per group (remote-writer.ts).
import { type Client, createClient, type InArgs, type Transaction } from "@libsql/client";
import { memoized } from "../lib/memo.ts";
import { type Driver, type DriverOptions, localPragmas } from "./driver.ts";
import { type BatchAnswer, type HranaBatcher, hranaBatcher } from "./hrana-batch.ts";
import { type Execute, type Op, runOp, type Statement } from "./op.ts";
import { parameterOrder } from "./parameters.ts";
import { answerOf, RemoteWriter } from "./remote-writer.ts";
import { claimSqliteFile, localPath } from "./sqlite.ts";

/**
 * Test and benchmark seam: wraps every client this driver opens (test/helpers/network.ts counts
 * round trips and simulates a network's delay and failures with it). outboxd never sets it.
 */
export const clientSeam: {
  /** Wraps each client opened, and the remote path's batcher (hrana-batch.ts). */
  wrap: (<C extends object>(client: C) => C) | null;
  /** Told of each remote write path opened (its `stats`: requests per group, for the benchmark). */
  writers: ((writer: RemoteWriter) => void) | null;
} = { wrap: null, writers: null };

export interface ClientDriverTarget {
  url: string;
  authToken?: string | undefined;
}

export async function openClientDriver(target: ClientDriverTarget, options: DriverOptions): Promise<Driver> {
  const local = target.url.startsWith("file:");
  // A local file runs on libsql's SQLite, inside @libsql/client: nothing else in this process may
  // have it open through another copy (sqlite.ts).
  const file = localPath(target.url);
  const release = file ? claimSqliteFile(file, "libsql") : () => {};
  const open = async () => {
    const created = createClient({
      url: target.url,
      authToken: target.authToken,
      intMode: "number",
      // A local file: one connection each, since a PRAGMA applies to the connection it ran on and
      // the client's pool would otherwise open fresh connections without them. A server: the
      // client's default of 20 requests at once (with 1, every read of the process, the
      // dispatcher's and the pages' included, would wait a round trip behind the one before).
      ...(local ? { concurrency: 1, timeout: options.busyTimeoutMs } : {}),
    });
    const client = clientSeam.wrap ? clientSeam.wrap(created) : created;
    if (local) for (const pragma of localPragmas(options)) await client.execute(pragma);
    return client;
  };
  let writer: Client;
  let reader: Client;
  try {
    writer = await open();
    reader = await open();
  } catch (error) {
    release();
    throw error;
  }
  // A server: the group path's batches sent by outboxd itself (hrana-batch.ts says why).
  const lean = local ? null : hranaBatcher(target.url, target.authToken);
  const batcher: HranaBatcher | null = lean && clientSeam.wrap ? clientSeam.wrap(lean) : lean;
  // A server: reads through the batcher too, each statement a one-statement read batch (what
  // @libsql/client's execute costs this thread is most of a read's: its encoder, its streams, its
  // rows with named and indexed properties); rows come back as plain objects, as the engine
  // driver gives them.
  const executeOnReader: Execute = batcher
    ? async (statement) => answerOf(statement, (await batcher.batch([statement], "read"))[0] as BatchAnswer)
    : executor(reader);
  const reconnect = async () => {
    writer.close();
    writer = await open();
  };

  // transaction("write") is what issues BEGIN IMMEDIATE (drizzle's session would ignore the mode).
  const beginWrite = async (): Promise<Transaction> => {
    try {
      return await writer.transaction("write");
    } catch (error) {
      // A BEGIN that failed (SQLITE_BUSY) leaves @libsql/client's local connection unable to
      // commit ever after ("SQL statements in progress"): start over on a fresh connection.
      if (local) await reconnect();
      throw error;
    }
  };

  const transaction = async <T>(op: Op<T>): Promise<T> => {
    const tx = await beginWrite();
    try {
      const value = await runOp(op, executor(tx));
      await tx.commit();
      return value;
    } catch (error) {
      if (!tx.closed) await tx.rollback();
      throw error;
    } finally {
      tx.close();
    }
  };
  const remote = new RemoteWriter({
    // Reads on the reader: the writer's connection may be held by a transaction meanwhile
    // (groups overlap, remote-writer.ts).
    batch: (statements, mode) =>
      batcher ? batcher.batch(statements, mode) : (mode === "read" ? reader : writer).batch(statements, mode),
    async lock(reads) {
      const tx = batcher ? await batcher.transaction("write") : await beginWrite();
      const end = async (error: unknown) => {
        if (!tx.closed) await tx.rollback().catch(() => undefined);
        tx.close();
        throw error;
      };
      const answers = await tx.batch(reads).catch((error: unknown) =>
        // Not a statement of the write batch (see GroupConnection.lock).
        end(
          Object.assign(new Error(String((error as Error)?.message ?? error)), {
            code: (error as { code?: unknown })?.code,
            cause: error,
          }),
        ),
      );
      return {
        answers,
        async commit(statements) {
          try {
            // COMMIT rides with the batch (the same statement tx.commit() would send alone): one
            // request less, and the lock is released as the batch ends (on a server, the stream's
            // close rides with it too: hrana-batch.ts).
            const results = await tx.batch([...statements, { sql: "COMMIT", args: {} }]);
            tx.close();
            return results.slice(0, -1);
          } catch (error) {
            return end(error);
          }
        },
        release: () => void end(null).catch(() => undefined),
      };
    },
    transaction,
    reconnect,
  });
  clientSeam.writers?.(remote);

  return {
    name: "client",
    read<T>(op: Op<T>): Promise<T> {
      return runOp(op, executeOnReader);
    },
    transaction,
    writeGroup: (ops) => remote.writeGroup(ops),
    nextGroup: () => remote.nextGroup(),
    async executeAlone(sql, args = {}) {
      await reader.execute({ sql, args });
    },
    async close() {
      writer.close();
      reader.close();
      release();
    },
  };
}

function executor(target: Client | Transaction): Execute {
  return async (statement: Statement) => {
    return answerOf(statement, await target.execute({ sql: statement.sql, args: argsOf(statement) }));
  };
}

/**
 * Only the arguments the statement's text names: a libSQL server refuses others (ARGS_INVALID), and
 * an operation may pass one object to two statements (updateOrInsert). (Not by position: a server
 * binds `:name` parameters by name only.)
 */
export function argsOf(statement: { sql: string; args: Statement["args"] }): InArgs {
  const names = namesOf(statement.sql);
  if (names.length === Object.keys(statement.args).length) return statement.args as InArgs;
  const named: Record<string, string | number | null> = {};
  for (const name of names) if (name in statement.args) named[name] = statement.args[name] ?? null;
  return named;
}

/** The `:name` parameters of a text (parameters.ts; where it cannot tell, every `:name` in it). */
const namesOf = memoized(
  (sql: string) =>
    parameterOrder(sql) ?? [...new Set([...sql.matchAll(/:([A-Za-z_]\w*)/g)].map((m) => m[1] as string))],
  4096,
);
