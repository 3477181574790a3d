// A Machine that dies while its request waits for the write lock (behind another Machine's turn),
// against the simulated libSQL server (test/helpers/sim-server.ts; streams expire after 300 ms of
// idleness here instead of 10 s). A stream is idle from when its last request was answered: one
// waiting for the lock is not. The server closed such a stream while it waited, and it then took
// the lock for a stream nobody could close any more: every writer after it waited forever (the
// two-machine killer test failed so once in a while under load: a commit never acknowledged, a
// backlog never drained).
import { expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir } from "../helpers/server.ts";
import { startSimServer } from "../helpers/sim-server.ts";

interface Answer {
  baton: string | null;
  results: { type: string }[];
}

function pipeline(url: string, baton: string | null, sqls: string[], close = false): Promise<Answer> {
  const requests: unknown[] = sqls.map((sql) => ({ type: "execute", stmt: { sql } }));
  if (close) requests.push({ type: "close" });
  return fetch(`${url}/v2/pipeline`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ baton, requests }),
  }).then((response) => response.json() as Promise<Answer>);
}

test("a stream whose request waits for the write lock longer than the idle timeout keeps it: once it expires in its turn, the next writer commits", async () => {
  const server = startSimServer(join(tempDir("outboxd-lock-waiters-"), "w.db"), "NORMAL", 300);
  const waiting = async () =>
    ((await (await fetch(`${server.url}/stats`)).json()) as { waiting: number }).waiting;
  try {
    await pipeline(server.url, null, ["CREATE TABLE t (x)"], true);
    // Machine A takes the lock (its group's reads, BEGIN with them) and works slowly: a request
    // every 100 ms, each keeping its stream alive.
    const a = await pipeline(server.url, null, ["BEGIN IMMEDIATE", "SELECT count(*) FROM t"]);
    expect(a.baton).not.toBeNull();
    // Machine B asks for the lock meanwhile, and waits.
    const b = pipeline(server.url, null, ["BEGIN IMMEDIATE", "SELECT count(*) FROM t"]);
    for (const deadline = Date.now() + 5_000; (await waiting()) !== 1; ) {
      if (Date.now() > deadline) throw new Error("B never waited for the lock");
      await Bun.sleep(5);
    }
    // B waits longer than a stream's idle timeout (300 ms) behind A's turn.
    for (let i = 0; i < 5; i++) {
      await Bun.sleep(100);
      await pipeline(server.url, a.baton, ["SELECT 1"]);
    }
    // A dies (it sends nothing more): its stream expires and B gets the lock, its reads answered.
    expect((await b).results.map((r) => r.type)).toEqual(["ok", "ok"]);
    // B dies too, in its turn: its stream expires, and a third writer commits.
    const c = await pipeline(
      server.url,
      null,
      ["BEGIN IMMEDIATE", "INSERT INTO t VALUES (1)", "COMMIT"],
      true,
    );
    expect(c.results.map((r) => r.type)).toEqual(["ok", "ok", "ok", "ok"]);
    const count = await pipeline(server.url, null, ["SELECT count(*) FROM t"], true);
    expect(count.results[0]?.type).toBe("ok");
  } finally {
    server.stop();
  }
}, 20_000);
