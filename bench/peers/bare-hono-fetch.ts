// Limit of commit-and-deliver: a bare Hono handler that stores nothing and makes one `fetch` to
// the receiver per request, after answering (as outboxd answers a commit, then delivers it).
// It answers POST /v1/commits like outboxd (201, {"events": [{"id"}]}) and sends the id as
// `webhook-id`, so bench/load/fixed-rate.ts and the receiver measure it exactly as outboxd.
//
//   RECEIVER_URL=http://127.0.0.1:N/hook PORT=0 npx bun bench/peers/bare-hono-fetch.ts
//     → {"listening": "http://127.0.0.1:N"}
//
// Env: RECEIVER_URL (required), PORT (0 = pick one), MAX_SECONDS (exits by itself, 3600).
import { Hono } from "hono";

const PORT = Number(process.env.PORT ?? 0);
const MAX_SECONDS = Number(process.env.MAX_SECONDS ?? 3600);
const RECEIVER_URL = process.env.RECEIVER_URL;
if (!RECEIVER_URL) throw new Error("RECEIVER_URL is required");
const receiverUrl = RECEIVER_URL;

const app = new Hono();
app.post("/v1/commits", async (c) => {
  const body = await c.req.text();
  const id = crypto.randomUUID();
  // After the response, as a dispatcher woken by the commit would.
  setImmediate(() => {
    fetch(receiverUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": id },
      body,
    }).then(
      (r) => r.arrayBuffer(),
      () => undefined,
    );
  });
  return c.json({ events: [{ id }] }, 201);
});

const server = Bun.serve({ hostname: "127.0.0.1", port: PORT, fetch: app.fetch });
console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }));
const stop = () => {
  server.stop(true);
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
setTimeout(stop, MAX_SECONDS * 1000).unref();
