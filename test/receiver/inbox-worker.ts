// One receiver in the concurrency test: a thread with its own connection to the shared inbox
// file, delivering the event it is given as soon as every worker is ready.
import { Database } from "bun:sqlite";
import { applyOnce, type OutboxEvent } from "../../src/receiver/verify.ts";
import { sqliteStore } from "./sqlite-store.ts";

export interface InboxJob {
  path: string;
  event: OutboxEvent;
  /** [workers ready, go]: each worker counts itself in, then blocks until go is set. */
  gate: Int32Array;
}

addEventListener("message", async ({ data }: MessageEvent<InboxJob>) => {
  const db = new Database(data.path);
  db.exec("PRAGMA busy_timeout = 30000");
  Atomics.add(data.gate, 0, 1);
  postMessage("ready");
  Atomics.wait(data.gate, 1, 0);
  let result: string;
  try {
    const outcome = await applyOnce(data.event, sqliteStore(db), (event, tx) => {
      tx.prepare("INSERT INTO effects (event_id, sequence) VALUES (?, ?)").run(event.id, event.sequence);
    });
    result = outcome.result;
  } catch (error) {
    result = `error: ${error}`;
  }
  // Closed before answering: the last connection to close checkpoints the WAL, and the test
  // reads the file as soon as every worker has answered.
  db.close();
  postMessage(result);
});
