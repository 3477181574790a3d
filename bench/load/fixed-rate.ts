export {}; // a module: top-level await

// Open-loop load: POSTs commits at a fixed rate for a fixed time, whatever the server's pace
// (a closed loop would slow down with the server and hide queueing). Prints one JSON line:
// {"sent", "ok", "errors", "responses": [[eventId, respondedAtMs], …]}.
//
//   URL=http://127.0.0.1:8080 TOKEN=… RATE=2000 SECONDS=10 bun bench/load/fixed-rate.ts
// ENDPOINTS (comma-separated endpoint ids) addresses every event to those endpoints only.
const url = `${process.env.URL}/v1/commits`;
const token = process.env.TOKEN ?? "";
const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECONDS ?? 10);
const aggregates = Number(process.env.AGGREGATES ?? 1000);
const endpoints = process.env.ENDPOINTS ? process.env.ENDPOINTS.split(",") : undefined;

const responses: [string, number][] = [];
let sent = 0;
let ok = 0;
let errors = 0;
const inFlight = new Set<Promise<void>>();

function send(n: number): void {
  const id = `r${n % aggregates}`;
  const body = JSON.stringify({
    records: [{ collection: "orders", id, data: { n } }],
    events: [{ type: "order.changed", payload: { n }, ...(endpoints ? { endpoints } : {}) }],
  });
  const request = fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  })
    .then(async (response) => {
      const at = performance.timeOrigin + performance.now();
      if (response.status !== 201) {
        errors++;
        await response.arrayBuffer();
        return;
      }
      const answer = (await response.json()) as { events: { id: string }[] };
      ok++;
      responses.push([answer.events[0]?.id ?? "", at]);
    })
    .catch(() => {
      errors++;
    })
    .finally(() => inFlight.delete(request));
  inFlight.add(request);
}

const start = performance.now();
const end = start + seconds * 1000;
while (performance.now() < end) {
  const due = Math.floor(((performance.now() - start) / 1000) * rate);
  while (sent < due) send(sent++);
  await Bun.sleep(1);
}
await Promise.all(inFlight);
console.log(JSON.stringify({ sent, ok, errors, responses }));
