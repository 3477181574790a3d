// Deno runs consume() of the TypeScript snippet against the outboxd that scripts/test-snippet.sh
// started: `deno run --no-config --no-remote --no-npm --allow-net=127.0.0.1 --check
// test/receiver/consume-deno.mjs URL ADMIN_TOKEN`.
import * as snippet from "../../src/receiver/verify.ts";
import { checkConsume } from "./consume-check.mjs";

const [url, adminToken] = Deno.args;
await checkConsume(snippet, { url, adminToken });
console.log("consume() under Deno: ok");
