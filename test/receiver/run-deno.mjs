// Deno runs the TypeScript snippet as a receiver would paste it, with nothing from npm or the
// network: `deno run --no-config --no-remote --no-npm --check test/receiver/run-deno.mjs`
// (part of `npm run test:snippet`; --check type-checks verify.ts under Deno's own settings).
import * as snippet from "../../src/receiver/verify.ts";
import { runChecks } from "./portable-checks.mjs";

if (!(await runChecks(snippet, "deno"))) Deno.exit(1);
