// rateLimit (DESIGN §19): a token bucket in the database that every dispatcher on it draws from.
// With a backlog due and an instant receiver on 127.0.0.1, attempt starts over any window W ≥ 1 s
// stay ≤ burst + 1.1·perSecond·W, and the whole drain runs at ≥ 0.9·perSecond; with three
// dispatchers (three servers on one database file) the limit is theirs together. Order per
// aggregate holds; the throttled metric counts the time held back.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const servers: TestServer[] = [];
const receivers: TestReceiver[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const r of receivers) await r.stop();
});

/** The most starts in any window of `w` ms, over the arrival times. */
function busiest(times: number[], w: number): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= w) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

async function drain(dispatchers: number, perSecond: number, burst: number, events: number) {
  const first = await startServer({ OUTBOXD_DISPATCH_CRON: "* * * * * *" });
  servers.push(first);
  const others: TestServer[] = [];
  for (let i = 1; i < dispatchers; i++) {
    const other = await startServer({
      OUTBOXD_DATABASE_URL: `file:${join(first.dir, "outboxd.db")}`,
      OUTBOXD_ADMIN_TOKEN: first.token,
    });
    servers.push(other);
    others.push(other);
  }
  const receiver = startReceiver();
  receivers.push(receiver);
  const { id } = expectStatus(
    await first.request("POST", "/v1/endpoints", { url: receiver.url, rateLimit: { perSecond, burst } }),
    201,
  );
  // Let every dispatcher see the rate-limited endpoint (their sweeps) before the backlog arrives.
  await waitFor("a sweep", async () => (await first.request("GET", "/readyz")).status === 200);
  const batch = 100;
  for (let done = 0; done < events; done += batch) {
    const list = Array.from({ length: Math.min(batch, events - done) }, (_, i) => ({
      type: "rate.x",
      aggregate: `rate/${(done + i) % 25}`,
      payload: { n: done + i },
      endpoints: [id],
    }));
    expectStatus(await first.request("POST", "/v1/commits", { events: list }), 201);
  }
  await waitFor(`${events} deliveries`, () => receiver.received.length >= events, 60_000);
  return { first, others, receiver, id };
}

function check(receiver: TestReceiver, perSecond: number, burst: number, events: number) {
  const times = receiver.received.map((r) => r.at).sort((a, b) => a - b);
  // Arrivals, not attempt starts: on a busy machine requests started on time can arrive bunched,
  // so a window of w ms of arrivals holds the starts of up to w + JITTER_MS. A dispatcher that
  // ignored the limit would deliver all of them within a second.
  const JITTER_MS = 250;
  for (const w of [1_000, 2_000]) {
    expect(busiest(times, w)).toBeLessThanOrEqual(
      burst + Math.floor(1.1 * perSecond * ((w + JITTER_MS) / 1000)),
    );
  }
  const seconds = ((times.at(-1) as number) - (times[0] as number)) / 1000;
  // The drain after the burst: (events - burst) at perSecond takes this long, within 10% either way.
  const expected = (events - burst) / perSecond;
  expect(seconds).toBeGreaterThanOrEqual(expected / 1.1 - 0.2);
  expect(seconds).toBeLessThanOrEqual(expected / 0.9 + 0.3);
  // Order per aggregate: sequences arrive ascending in each aggregate.
  const last = new Map<string, number>();
  for (const r of receiver.received) {
    const body = JSON.parse(r.body) as { aggregate: string; sequence: number };
    expect(body.sequence).toBeGreaterThan(last.get(body.aggregate) ?? 0);
    last.set(body.aggregate, body.sequence);
  }
}

test("one dispatcher keeps to perSecond (plus burst) and keeps order; the throttled time is counted", async () => {
  const { first, receiver, id } = await drain(1, 100, 10, 400);
  check(receiver, 100, 10, 400);
  const text = (await first.request("GET", "/metrics")).body as string;
  const line = text
    .split("\n")
    .find((l: string) => l.startsWith(`outboxd_endpoint_throttled_seconds_total{endpoint="${id}"}`));
  expect(line).toBeDefined();
  expect(Number(line?.split(" ").pop())).toBeGreaterThan(1);
}, 90_000);

test("three dispatchers on one database keep to the limit together", async () => {
  const { receiver } = await drain(3, 100, 10, 400);
  check(receiver, 100, 10, 400);
}, 90_000);
