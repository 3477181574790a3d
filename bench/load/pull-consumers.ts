export {}; // a module: top-level await

// Pull consumers for the pull bench: POLLERS concurrent loops, each polling up to MAX deliveries
// of ENDPOINT, checking order, and acking the batch, until TOTAL deliveries were acked. Checks
// on the way: no aggregate is leased to two pollers at once, and each aggregate's sequences are
// acked 1, 2, 3, … The drain lasts from the first poll to the answer of the last ack; pollers
// still waiting then in a long poll (the backlog is gone, nothing will come) are called off, so
// their wait (up to 1 s) is not counted. Prints one JSON line:
// {"acked", "seconds", "polls", "emptyPolls", "holdViolations", "orderViolations", "cpuSeconds"}.
//
//   URL=… TOKEN=… ENDPOINT=ep_… TOTAL=30000 POLLERS=4 MAX=100 bun bench/load/pull-consumers.ts
const url = process.env.URL ?? "";
const token = process.env.TOKEN ?? "";
const endpoint = process.env.ENDPOINT ?? "";
const total = Number(process.env.TOTAL ?? 10_000);
const pollers = Number(process.env.POLLERS ?? 4);
const max = Number(process.env.MAX ?? 100);

interface Pulled {
  deliveryId: string;
  leaseToken: string;
  event: { aggregate: string; sequence: number };
}

/** Aborted once the last delivery is acked: ends the long polls still waiting. */
const drained = new AbortController();
let drainedAt = 0;

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${url}/v1/endpoints/${endpoint}/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: drained.signal,
  });
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
};

const held = new Set<string>();
const last = new Map<string, number>();
let acked = 0;
let polls = 0;
let emptyPolls = 0;
let holdViolations = 0;
let orderViolations = 0;

async function consume(): Promise<void> {
  while (acked < total) {
    let data: Pulled[];
    try {
      ({ data } = (await post("poll", { max, wait: "1s", lease: "60s" })) as { data: Pulled[] });
    } catch (error) {
      if (drained.signal.aborted) return;
      throw error;
    }
    polls++;
    if (data.length === 0) {
      emptyPolls++;
      continue;
    }
    for (const { event } of data) {
      if (held.has(event.aggregate)) holdViolations++;
      held.add(event.aggregate);
      if (event.sequence !== (last.get(event.aggregate) ?? 0) + 1) orderViolations++;
    }
    // Applied (here: recorded). The holds end before the ack is sent: from then on the server
    // may lease each aggregate's next event to anyone.
    for (const { event } of data) {
      held.delete(event.aggregate);
      last.set(event.aggregate, event.sequence);
    }
    await post("ack", { acks: data.map(({ deliveryId, leaseToken }) => ({ deliveryId, leaseToken })) });
    acked += data.length;
    if (acked >= total && !drained.signal.aborted) {
      drainedAt = performance.now();
      drained.abort();
    }
  }
}

const cpuBefore = process.cpuUsage();
const started = performance.now();
await Promise.all(Array.from({ length: pollers }, consume));
const seconds = (drainedAt - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
console.log(
  JSON.stringify({
    acked,
    seconds,
    polls,
    emptyPolls,
    holdViolations,
    orderViolations,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  }),
);
