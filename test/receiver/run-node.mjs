// Node.js >= 20 runs the generated plain-JavaScript snippet (it cannot run the .ts):
// `node test/receiver/run-node.mjs` (part of `npm run test:snippet`).
import * as snippet from "../../src/receiver/verify.js";
import { runChecks } from "./portable-checks.mjs";

if (!(await runChecks(snippet, "node"))) process.exitCode = 1;
