// Run as a child by start-path.test.ts: a whole outboxd on a local file serves a commit, then an
// event type with a schema is registered and used; prints which heavy modules were loaded when.
import { createOutboxd } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";

const HEAVY = {
  ajv: "/node_modules/ajv/",
  libsqlClient: "/node_modules/@libsql/client/",
  mcp: "/@modelcontextprotocol/",
};
const loaded = () =>
  Object.fromEntries(
    Object.entries(HEAVY).map(([name, part]) => [
      name,
      Object.keys(require.cache).some((p) => p.includes(part)),
    ]),
  );
const outboxd = await createOutboxd(loadConfig(process.env));
const request = (method: string, path: string, body: unknown) =>
  outboxd.http.request(path, {
    method,
    headers: {
      authorization: `Bearer ${process.env.OUTBOXD_ADMIN_TOKEN}`,
      "content-type": "application/json",
    },
    body: JSON.stringify(body),
  });
const commit = await request("POST", "/v1/commits", { records: [{ collection: "c", id: "1", data: {} }] });
const afterCommit = loaded();
const put = await request("PUT", "/v1/event-types/order.paid", {
  schema: { type: "object", required: ["total"] },
});
const invalid = await request("POST", "/v1/commits", {
  events: [{ type: "order.paid", aggregate: "o/1", payload: {} }],
});
await outboxd.stop();
console.log(
  JSON.stringify({
    statuses: [commit.status, put.status, invalid.status],
    afterCommit,
    afterSchema: loaded(),
  }),
);
