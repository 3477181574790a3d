// The simulated libSQL server's reader thread (sim-server.ts): its own connection to the database
// file, answering the requests that only read while the main thread runs write transactions.
import { Connections, type Resolved, runRequests } from "./sim-server.ts";

declare const self: Worker;

const connections = new Connections(process.argv.at(-1) as string);

self.onmessage = (event: MessageEvent<{ id: number; requests: Resolved[] }>) => {
  const { id, requests } = event.data;
  const results = runRequests(connections, requests);
  // A read transaction lives within one request here (see sim-server.ts).
  if (connections.db.inTransaction) connections.db.exec("ROLLBACK");
  self.postMessage({ id, results });
};
