// What both Postgres peers share (bench/peers/README.md): their HTTP face (POST /commit,
// GET /stats, POST /prefill, and the `{"listening": url}` line the runner waits for) and the
// business transaction around each commit.
import { createServer } from "node:http";

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
}

/** Serves the peer on 127.0.0.1:`port`; returns the node:http server. */
export function servePeer(port, { commit, stats, prefill }) {
  const server = createServer(async (req, res) => {
    try {
      if (req.method === "POST" && req.url === "/commit") {
        const body = await readJson(req);
        if (typeof body.aggregate !== "string" || body.aggregate === "") {
          return reply(res, 400, { error: "aggregate must be a non-empty string" });
        }
        const type = typeof body.type === "string" ? body.type : "record.committed";
        return reply(res, 201, { id: await commit(body.aggregate, type, body.data ?? null) });
      }
      if (req.method === "GET" && req.url === "/stats") return reply(res, 200, await stats());
      if (req.method === "POST" && req.url === "/prefill") {
        const body = await readJson(req);
        const inserted = await prefill(Number(body.count ?? 0), Math.max(1, Number(body.aggregates ?? 1)));
        return reply(res, 200, { inserted });
      }
      return reply(res, 404, { error: "not found" });
    } catch (error) {
      return reply(res, 500, { error: String(error?.message ?? error) });
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, "127.0.0.1", () => {
    console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.address().port}` }));
  });
  return server;
}

/** Runs `fn(client)` between BEGIN and COMMIT on a pooled connection; ROLLBACK if it throws. */
export async function inTransaction(pool, fn) {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
