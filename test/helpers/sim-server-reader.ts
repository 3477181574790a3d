// The simulated libSQL server's reader thread (sim-server.ts): its own connection to the database
// file, answering the requests that only read while the main thread runs write transactions.
// Requests come as JSON text, with the stream's stored SQL texts; results go back as JSON text.
import { Connections, type HRequest, resolve, runRequests } from "./sim-server.ts";

declare const self: Worker;

const connections = new Connections(process.argv.at(-1) as string);

self.onmessage = (event: MessageEvent<{ id: number; json: string }>) => {
  const { id, json } = event.data;
  const { sqls, requests } = JSON.parse(json) as {
    sqls: [number, string][];
    requests: Exclude<HRequest, { type: "store_sql" | "close_sql" | "close" }>[];
  };
  const stored = new Map(sqls);
  let results: string[];
  try {
    results = runRequests(
      connections,
      requests.map((request) => resolve(stored, request)),
    ).map((result) => JSON.stringify(result));
  } catch (error) {
    // (an unknown stored SQL id: the client's mistake, answered as an error of each request)
    const message = JSON.stringify(String((error as Error)?.message ?? error));
    results = requests.map(() => `{"type":"error","error":{"message":${message},"code":"SQL_NOT_STORED"}}`);
  }
  // A read transaction lives within one request here (see sim-server.ts).
  if (connections.db.inTransaction) connections.db.exec("ROLLBACK");
  self.postMessage({ id, results });
};
