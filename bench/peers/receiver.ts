// The webhook receiver every delivery of the bench goes to, outboxd's and the peers' alike.
// It answers 200 to every POST, counts them and records when each arrived.
//
//   PORT=0 [VERIFY_SECRET=whsec_…] npx bun bench/peers/receiver.ts
//
// Env: PORT (0 = pick one; prints {"listening": "http://127.0.0.1:N"}), VERIFY_SECRET (then each
// webhook is checked with the receiver snippet's verifyWebhook first, as a user's receiver
// would; a failed check answers 400 and is counted in `rejected`, not in `count`),
// MAX_SECONDS (exits by itself after this long, 3600), HANG (1: deliveries are never answered;
// they are counted when they arrive, and the connection is held until the sender gives up).
// HTTP: GET /count → {"count", "rejected", "first", "last"} (the first and last arrival, ms epoch,
// Date.now() clock, or null: a drain's rate is timed between them, its start-up apart); GET /arrivals?since=MS → [{"id", "at"}] for the
// arrivals at or after MS (ms epoch, Date.now() clock), in arrival order; POST /reset forgets
// everything. The id is the `webhook-id` header (outboxd) or else the body's `id` (peers).
// Every other POST path is a delivery.
import { verifyWebhook } from "../../src/receiver/verify.ts";

const PORT = Number(process.env.PORT ?? 0);
const SECRET = process.env.VERIFY_SECRET;
const MAX_SECONDS = Number(process.env.MAX_SECONDS ?? 3600);
const HANG = process.env.HANG === "1";

let count = 0;
let rejected = 0;
// Parallel arrays: cheaper than one object per arrival at tens of thousands per second.
let ids: string[] = [];
let ats: number[] = [];

function bodyId(body: string): string {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === "string" ? id : "";
  } catch {
    return "";
  }
}

async function deliver(request: Request): Promise<Response> {
  const body = await request.text();
  let id = request.headers.get("webhook-id") ?? "";
  if (SECRET) {
    try {
      id = (await verifyWebhook({ headers: request.headers, body }, SECRET)).id;
    } catch {
      rejected++;
      return new Response("bad signature", { status: 400 });
    }
  }
  count++;
  ids.push(id || bodyId(body));
  ats.push(Date.now());
  if (HANG) return new Promise<Response>(() => {});
  return new Response(null, { status: 200 });
}

function arrivals(since: number): { id: string; at: number }[] {
  // Arrival times only grow: find the first one at or after `since`, then copy the tail.
  let lo = 0;
  let hi = ats.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ats[mid] as number) < since) lo = mid + 1;
    else hi = mid;
  }
  const out: { id: string; at: number }[] = new Array(ats.length - lo);
  for (let i = lo; i < ats.length; i++) out[i - lo] = { id: ids[i] as string, at: ats[i] as number };
  return out;
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: PORT,
  // Bun's maximum: a hanging receiver holds its connections longer than any send timeout.
  idleTimeout: 255,
  async fetch(request) {
    const { pathname, searchParams } = new URL(request.url);
    if (request.method === "GET" && pathname === "/count") {
      return Response.json({ count, rejected, first: ats[0] ?? null, last: ats.at(-1) ?? null });
    }
    if (request.method === "GET" && pathname === "/arrivals") {
      return Response.json(arrivals(Number(searchParams.get("since") ?? 0) || 0));
    }
    if (request.method === "POST" && pathname === "/reset") {
      count = 0;
      rejected = 0;
      ids = [];
      ats = [];
      return Response.json({ count });
    }
    if (request.method === "POST") return deliver(request);
    return new Response("not found", { status: 404 });
  },
});

console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }));

const stop = () => {
  server.stop(true);
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
setTimeout(stop, MAX_SECONDS * 1000).unref();
