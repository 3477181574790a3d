// Node.js runs consume() of the generated JavaScript snippet against the outboxd that
// scripts/test-snippet.sh started: `node test/receiver/consume-node.mjs URL ADMIN_TOKEN`.
import * as snippet from "../../src/receiver/verify.js";
import { checkConsume } from "./consume-check.mjs";

const [url, adminToken] = process.argv.slice(2);
await checkConsume(snippet, { url, adminToken });
console.log("consume() under Node.js: ok");
