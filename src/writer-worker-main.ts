// The writer thread's entry point (db/writer-thread.ts starts it on a Bun Worker when
// OUTBOXD_WRITER_THREAD=worker; scripts/build.ts builds it into the executable beside main.ts):
// every named write, the crash drills' failpoints, then the writer's side of the thread.
import "./writes.ts";
import { serveWriter } from "./db/writer-worker.ts";
import { enableFailpoints } from "./failpoints.ts";

serveWriter((start) => enableFailpoints(start.failpoints));
