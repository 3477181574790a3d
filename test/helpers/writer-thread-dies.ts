// A process whose writer thread dies (test/db/writer-thread.test.ts): it opens a database with
// OUTBOXD_WRITER_THREAD=worker, writes once, then queues a write that ends the writer thread.
// The process must then exit non-zero on its own; "answered" goes to stderr if the write was answered.
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/open.ts";
import { createScratchWrite, endThreadWrite, TEST_WRITES } from "./test-writes.ts";

const db = await openDatabase({
  ...loadConfig({ OUTBOXD_DATABASE_URL: `file:${process.argv[2]}`, OUTBOXD_WRITER_THREAD: "worker" }),
  writerModules: [TEST_WRITES],
});
await db.write(createScratchWrite());
console.error("written");
await db.write(endThreadWrite()).then(
  () => console.error("answered"),
  () => console.error("refused"),
);
// Kept alive: only the writer thread's death may end this process.
setInterval(() => {}, 1000);
