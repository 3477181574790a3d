export {}; // a module: top-level await

// One SSE consumer for the pull bench: reads ENDPOINT's stream (max MAX unacknowledged), notes
// when each event arrives, and acks what arrived every ACK_EVERY_MS (one request per batch).
// Prints {"ready": true} once the stream is open; on SIGTERM prints
// {"arrivals": [[eventId, atMs], …], "orderViolations"} and exits.
//
//   URL=… TOKEN=… ENDPOINT=ep_… MAX=500 bun bench/load/pull-stream.ts
const url = process.env.URL ?? "";
const token = process.env.TOKEN ?? "";
const endpoint = process.env.ENDPOINT ?? "";
const max = Number(process.env.MAX ?? 500);
const ackEveryMs = Number(process.env.ACK_EVERY_MS ?? 2);
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

const arrivals: [string, number][] = [];
const last = new Map<string, number>();
let orderViolations = 0;
let toAck: { deliveryId: string; leaseToken: string }[] = [];

process.on("SIGTERM", () => {
  console.log(JSON.stringify({ arrivals, orderViolations }));
  process.exit(0);
});

setInterval(() => {
  if (toAck.length === 0) return;
  const acks = toAck;
  toAck = [];
  void fetch(`${url}/v1/endpoints/${endpoint}/ack`, {
    method: "POST",
    headers,
    body: JSON.stringify({ acks }),
  })
    .then((r) => r.arrayBuffer())
    .catch(() => {});
}, ackEveryMs);

const response = await fetch(`${url}/v1/endpoints/${endpoint}/stream?max=${max}`, { headers });
if (response.status !== 200) throw new Error(`stream: ${response.status} ${await response.text()}`);
console.log(JSON.stringify({ ready: true }));
const decoder = new TextDecoder();
let buffer = "";
for await (const chunk of response.body as ReadableStream<Uint8Array>) {
  const at = performance.timeOrigin + performance.now();
  buffer += decoder.decode(chunk, { stream: true });
  let end = buffer.indexOf("\n\n");
  while (end >= 0) {
    const message = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    end = buffer.indexOf("\n\n");
    const data = message.split("\n").find((line) => line.startsWith("data: "));
    if (!data) continue; // a comment (connected, keepalive)
    const pulled = JSON.parse(data.slice(6)) as {
      deliveryId: string;
      leaseToken: string;
      event: { id: string; aggregate: string; sequence: number };
    };
    arrivals.push([pulled.event.id, at]);
    const { aggregate, sequence } = pulled.event;
    if (sequence !== (last.get(aggregate) ?? 0) + 1) orderViolations++;
    last.set(aggregate, sequence);
    toAck.push({ deliveryId: pulled.deliveryId, leaseToken: pulled.leaseToken });
  }
}
