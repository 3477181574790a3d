// Every module that defines named writes (db/writer-ops.ts), for the writer thread
// (db/writer-worker-main.ts): importing them registers their writes there under the same names as on
// the main thread (test/db/writer-thread.test.ts checks that none is missing).
import "./auth/writes.ts";
import "./commit/writes.ts";
import "./deliveries/expire.ts";
import "./deliveries/replay.ts";
import "./deliveries/retention.ts";
import "./deliveries/writes.ts";
import "./dispatch/rate-limit.ts";
import "./dispatch/writes.ts";
import "./endpoints/recover.ts";
import "./endpoints/writes.ts";
import "./event-types/writes.ts";
import "./ledger/writes.ts";
import "./proposals/writes.ts";
import "./pull/writes.ts";
