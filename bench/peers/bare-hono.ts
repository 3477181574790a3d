// Limit: a bare Hono app on Bun whose POST /commit parses the JSON body and answers 201: the
// HTTP layer outboxd is built on, without auth, validation or storage. The runner points
// autocannon at it.
//
//   PORT=0 npx bun bench/peers/bare-hono.ts   → {"listening": "http://127.0.0.1:N"}
//
// Env: PORT (0 = pick one), MAX_SECONDS (exits by itself after this long, 3600).
import { Hono } from "hono";

const PORT = Number(process.env.PORT ?? 0);
const MAX_SECONDS = Number(process.env.MAX_SECONDS ?? 3600);

const app = new Hono();
app.post("/commit", async (c) => {
  await c.req.json();
  return c.json({ ok: true }, 201);
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
