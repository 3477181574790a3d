// The writer thread's entry point (writer-thread.ts starts it on a Worker; scripts/build.ts builds
// it into the executable beside main.ts): every named write, the crash drills' failpoints, then the
// writer's side of the thread, with how it builds the stand-in of the one loan there is: the
// dispatcher's head leases. A composition root, like main.ts: the one file of db/ that imports
// the domain (.dependency-cruiser.cjs). It lives beside writer-thread.ts because the executable
// finds a worker's module by its name relative to the module that starts it, both at its root.
import "../writes.ts";
import { budgetLeases, type LeaseBudget } from "../deliveries/lease-budget.ts";
import { enableFailpoints } from "../failpoints.ts";
import { serveWriter } from "./writer-worker.ts";

serveWriter(
  (start) => enableFailpoints(start.failpoints),
  (budget, took) => budgetLeases(budget as LeaseBudget, took),
);
