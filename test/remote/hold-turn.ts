// A Machine in its turn of the server's write lock, about to die (dead-turn.test.ts): the first
// request of a racing group (remote-writer.ts: BEGIN rides with the group's reads, and the lock
// is held until its batch with COMMIT), then nothing. Prints "holding" once the server answered.
//   bun test/remote/hold-turn.ts <server url>
import { hranaBatcher } from "../../src/db/hrana-batch.ts";

const batcher = hranaBatcher(process.argv[2] ?? "", undefined);
if (!batcher) throw new Error("usage: bun test/remote/hold-turn.ts http://127.0.0.1:<port>");
const turn = await batcher.transaction("write");
await turn.batch([{ sql: "SELECT count(*) AS n FROM records", args: {} }]);
console.log("holding");
await new Promise(() => undefined);
