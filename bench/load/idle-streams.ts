export {}; // a module: top-level await

// Idle SSE streams on ENDPOINT (a pull endpoint nothing is committed to), opened and closed on
// command, so one server can be measured with and without them in alternating blocks. Reads
// lines on stdin: `open N` opens N streams (in waves of 100, so the server's accept queue is
// not flooded) and prints {"open": n} once every one has answered; `close` ends them all and
// prints {"closed": n, "closedEarly": n} (streams the server ended on its own: there must be
// none). Ends at stdin's end or on SIGTERM.
//
//   URL=… TOKEN=… ENDPOINT=ep_… bun bench/load/idle-streams.ts
const url = process.env.URL ?? "";
const token = process.env.TOKEN ?? "";
const endpoint = process.env.ENDPOINT ?? "";

let open: AbortController[] = [];
let closedEarly = 0;

async function openOne(): Promise<AbortController> {
  const stop = new AbortController();
  const response = await fetch(`${url}/v1/endpoints/${endpoint}/stream?max=10`, {
    headers: { authorization: `Bearer ${token}` },
    signal: stop.signal,
  });
  if (response.status !== 200) throw new Error(`stream: ${response.status}`);
  // Read (and drop) keepalives in the background; note a stream that ends before we close it.
  void (async () => {
    try {
      for await (const _ of response.body as ReadableStream<Uint8Array>) {
        // keepalive comments
      }
    } catch {}
    if (!stop.signal.aborted) closedEarly++;
  })();
  return stop;
}

async function command(line: string): Promise<void> {
  const [verb, count] = line.trim().split(/\s+/);
  if (verb === "open") {
    const n = Number(count);
    for (let i = 0; i < n; i += 100) {
      open.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, openOne))));
    }
    console.log(JSON.stringify({ open: open.length }));
  } else if (verb === "close") {
    for (const stop of open) stop.abort();
    console.log(JSON.stringify({ closed: open.length, closedEarly }));
    open = [];
  }
}

process.on("SIGTERM", () => process.exit(0));
let buffer = "";
for await (const chunk of process.stdin as unknown as AsyncIterable<Uint8Array>) {
  buffer += new TextDecoder().decode(chunk);
  for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
    await command(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
  }
}
