export {}; // a module: top-level await

// COUNT idle SSE streams on ENDPOINT (a pull endpoint nothing is committed to), held open until
// SIGTERM. Prints {"open": n} once every stream has answered, then, on SIGTERM,
// {"closedEarly": n} (streams the server ended on its own: there must be none).
//
//   URL=… TOKEN=… ENDPOINT=ep_… COUNT=1000 bun bench/load/idle-streams.ts
const url = process.env.URL ?? "";
const token = process.env.TOKEN ?? "";
const endpoint = process.env.ENDPOINT ?? "";
const count = Number(process.env.COUNT ?? 1000);

let closedEarly = 0;
let stopping = false;
process.on("SIGTERM", () => {
  stopping = true;
  console.log(JSON.stringify({ closedEarly }));
  process.exit(0);
});

async function open(): Promise<void> {
  const response = await fetch(`${url}/v1/endpoints/${endpoint}/stream?max=10`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200) throw new Error(`stream: ${response.status}`);
  // Read (and drop) keepalives in the background; note a stream that ends before we stop.
  void (async () => {
    try {
      for await (const _ of response.body as ReadableStream<Uint8Array>) {
        // keepalive comments
      }
    } catch {}
    if (!stopping) closedEarly++;
  })();
}

// In waves, so the server's accept queue is not flooded at once.
for (let i = 0; i < count; i += 100) {
  await Promise.all(Array.from({ length: Math.min(100, count - i) }, open));
}
console.log(JSON.stringify({ open: count }));
setInterval(() => {}, 60_000);
