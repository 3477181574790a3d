// The simulated libSQL server's reader thread (sim-server.ts): its own read connection to the
// database file, answering read requests while the main thread runs write batches.
import { Connections, runReads, type WireResponse, type WireStatement } from "./sim-server.ts";

declare const self: Worker;

const connections = new Connections(process.argv.at(-1) as string);

self.onmessage = (event: MessageEvent<{ id: number; stmts: WireStatement[]; snapshot: boolean }>) => {
  const { id, stmts, snapshot } = event.data;
  const response: WireResponse = runReads(connections, stmts, snapshot);
  self.postMessage({ id, response });
};
