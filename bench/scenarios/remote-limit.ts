// The bare limit of a libSQL server for commits like outboxd's smallest (one record, one event), in
// the same run as outboxd's figures: @libsql/client `batch(…, "write")` requests one after the
// other, each carrying 64 commits, as 2 INSERTs per commit (row by row) or as 2 set-based
// `INSERT … SELECT … FROM json_each(?)` statements for the whole batch. Its own tables in the
// server's database, dropped after.
import { createClient, type InStatement } from "@libsql/client";

export interface CommitLimit {
  rowByRow: number;
  setBased: number;
}

const PER_BATCH = 64;

export async function commitLimit(url: string, seconds: number): Promise<CommitLimit> {
  const client = createClient({ url, intMode: "number" });
  try {
    await client.batch(
      [
        "DROP TABLE IF EXISTS limit_records",
        "DROP TABLE IF EXISTS limit_events",
        "CREATE TABLE limit_records (id TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL)",
        "CREATE TABLE limit_events (id TEXT PRIMARY KEY, aggregate TEXT NOT NULL, sequence INTEGER NOT NULL, payload TEXT NOT NULL)",
      ],
      "write",
    );
    let serial = 0;
    const commits = () =>
      Array.from({ length: PER_BATCH }, () => {
        serial += 1;
        const id = `r${serial}`;
        return { id, data: JSON.stringify({ id, n: serial }), event: crypto.randomUUID() };
      });
    const rowByRow = (): InStatement[] =>
      commits().flatMap((c) => [
        { sql: "INSERT INTO limit_records (id, version, data) VALUES (?, 1, ?)", args: [c.id, c.data] },
        {
          sql: "INSERT INTO limit_events (id, aggregate, sequence, payload) VALUES (?, ?, 1, ?)",
          args: [c.event, `limit/${c.id}`, c.data],
        },
      ]);
    const setBased = (): InStatement[] => {
      const rows = JSON.stringify(commits());
      return [
        {
          sql: "INSERT INTO limit_records (id, version, data) SELECT value ->> 'id', 1, value ->> 'data' FROM json_each(?)",
          args: [rows],
        },
        {
          sql: "INSERT INTO limit_events (id, aggregate, sequence, payload) SELECT value ->> 'event', 'limit/' || (value ->> 'id'), 1, value ->> 'data' FROM json_each(?)",
          args: [rows],
        },
      ];
    };
    const rate = async (make: () => InStatement[]) => {
      // A second of warm-up, then the measured run.
      for (const until = performance.now() + 1000; performance.now() < until; )
        await client.batch(make(), "write");
      let batches = 0;
      const started = performance.now();
      const until = started + seconds * 1000;
      while (performance.now() < until) {
        await client.batch(make(), "write");
        batches += 1;
      }
      return Math.round((batches * PER_BATCH * 1000) / (performance.now() - started));
    };
    const result = { rowByRow: await rate(rowByRow), setBased: await rate(setBased) };
    await client.batch(["DROP TABLE limit_records", "DROP TABLE limit_events"], "write");
    return result;
  } finally {
    client.close();
  }
}
