// Run as a child by tracing.test.ts: a whole outboxd (HTTP app, commit service, dispatcher) with
// tracing off serves a commit; prints how many @opentelemetry modules the process loaded.
import { createOutboxd } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";

const outboxd = await createOutboxd(loadConfig(process.env));
const response = await outboxd.http.request("/v1/commits", {
  method: "POST",
  headers: { authorization: `Bearer ${process.env.OUTBOXD_ADMIN_TOKEN}`, "content-type": "application/json" },
  body: JSON.stringify({ records: [{ collection: "c", id: "1", data: {} }] }),
});
await outboxd.stop();
const loaded = Object.keys(require.cache).filter((path) => path.includes("@opentelemetry"));
console.log(JSON.stringify({ status: response.status, loaded: loaded.length }));
