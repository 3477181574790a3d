// retrySchedule (DESIGN §19): the waits before attempts 2, 3, … replace the backoff, the last one
// repeats, each is shortened by up to 10% at random, a longer Retry-After wins up to max(last
// wait, OUTBOXD_RETRY_CAP), and the last attempt before the deadline is kept. On a controlled
// clock (decide is a function of the time it is given), then end to end on a real server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decide, LAST_ATTEMPT_MARGIN_MS } from "../../src/dispatch/decide.ts";
import { scheduleOf } from "../../src/dispatch/retry-policy.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const T0 = Date.parse("2026-12-07T12:00:00Z");
const DAY = 86_400_000;
const policy = { baseMs: 5_000, capMs: 3_600_000, schedule: scheduleOf('["5s","30s","2m"]') };
const failed = { statusCode: 500, retryAfter: null };
const row = (attemptCount: number) => ({ attemptCount, availableAt: T0, deliverBy: T0 + DAY });

describe("on a controlled clock", () => {
  test("each wait to the second, the last repeating", () => {
    const waits = [1, 2, 3, 4, 5].map((attempt) => {
      const completion = decide(row(attempt), failed, T0, policy, () => 0);
      if (completion.kind !== "retry") throw new Error(completion.kind);
      return completion.nextAttemptAt - T0;
    });
    expect(waits).toEqual([5_000, 30_000, 120_000, 120_000, 120_000]);
  });

  test("shortened by up to 10% at random, never lengthened", () => {
    const at = (random: number) => {
      const completion = decide(row(2), failed, T0, policy, () => random);
      return completion.kind === "retry" ? completion.nextAttemptAt - T0 : Number.NaN;
    };
    expect(at(1)).toBe(27_000);
    expect(at(0.5)).toBe(28_500);
    for (let i = 0; i < 100; i++) {
      const wait = at(Math.random());
      expect(wait).toBeGreaterThanOrEqual(27_000);
      expect(wait).toBeLessThanOrEqual(30_000);
    }
  });

  test("Retry-After wins when longer, capped at max(last wait, OUTBOXD_RETRY_CAP)", () => {
    const asked = (seconds: number, p = policy) => {
      const completion = decide(row(1), { statusCode: 429, retryAfter: String(seconds) }, T0, p, () => 0);
      return completion.kind === "retry" ? completion.nextAttemptAt - T0 : Number.NaN;
    };
    expect(asked(2)).toBe(5_000); // shorter: the schedule's wait
    expect(asked(60)).toBe(60_000);
    expect(asked(7_200)).toBe(3_600_000); // the cap (longer than the last wait)
    const long = { baseMs: 5_000, capMs: 60_000, schedule: scheduleOf('["5s","10h"]') };
    expect(asked(7_200, long)).toBe(7_200_000); // the last wait (longer than the cap) caps it
  });

  test("a wait past the deadline becomes one last attempt at deliverBy - 1 s", () => {
    const near = { attemptCount: 3, availableAt: T0, deliverBy: T0 + 60_000 };
    const completion = decide(near, failed, T0, policy, () => 0);
    expect(completion).toEqual({
      kind: "retry",
      at: T0,
      nextAttemptAt: T0 + 60_000 - LAST_ATTEMPT_MARGIN_MS,
    });
  });
});

describe("end to end", () => {
  let server: TestServer;
  let receiver: TestReceiver;
  beforeAll(async () => {
    server = await startServer();
    receiver = startReceiver(() => new Response("no", { status: 500 }));
  });
  afterAll(async () => {
    await server.stop();
    await receiver.stop();
  });

  test("a failed attempt is retried after the endpoint's first wait", async () => {
    const { id } = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: receiver.url, retrySchedule: ["40s", "3m"] }),
      201,
    );
    const commit = expectStatus(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "sched.x", aggregate: "sched/1", endpoints: [id] }],
      }),
      201,
    );
    const deliveryId = commit.events[0].deliveries[0].id;
    const first = await waitFor("the first failed attempt", async () => {
      const d = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}`), 200);
      return d.attemptCount === 1 && d.lastStatusCode === 500 && d;
    });
    const [attempt] = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200);
    const wait = Date.parse(first.nextAttemptAt) - Date.parse(attempt.at);
    expect(wait).toBeGreaterThanOrEqual(36_000 - 1_000);
    expect(wait).toBeLessThanOrEqual(40_000 + 1_000);
  });
});
