// The completion queue (src/dispatch/completions.ts): outcomes are written in batches, held for a
// larger batch only while the dispatcher has sends lined up, and none is ever dropped.
import { describe, expect, test } from "bun:test";
import type { Completion } from "../../src/deliveries/complete.ts";
import { CompletionQueue, HOLD_BATCH, type PendingCompletion } from "../../src/dispatch/completions.ts";
import type { Logger } from "../../src/ops/log.ts";

const quiet: Logger = { log() {}, enabled: () => false };

function item(n: number, endpointId = "e"): PendingCompletion<number> {
  const completion: Completion = { kind: "delivered", at: 0, latencyMs: 1 };
  return {
    attempt: {
      deliveryId: `d${n}`,
      owner: "o",
      endpointId,
      startedAt: 0,
      durationMs: 1,
      statusCode: 200,
      error: null,
      responsePrefix: null,
    },
    completion,
    leaseUntil: Number.POSITIVE_INFINITY,
    context: n,
  };
}

function queue(hold: (endpointIds: ReadonlySet<string>) => boolean) {
  const batches: number[][] = [];
  const written: number[] = [];
  const q = new CompletionQueue<number>({
    write: async (items) => {
      batches.push(items.map((i) => i.context));
      return items.map(() => true);
    },
    written: (items) => written.push(...items.map((i) => i.context)),
    hold,
    logger: quiet,
    clock: () => 0,
  });
  return { q, batches, written };
}

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe("completion queue", () => {
  test("without sends lined up, an outcome is written at once", async () => {
    const { q, written } = queue(() => false);
    q.push(item(1));
    await q.idle();
    expect(written).toEqual([1]);
  });

  test("with sends lined up, outcomes are held and written together, none lost", async () => {
    const { q, batches, written } = queue(() => true);
    for (let n = 0; n < 5; n++) q.push(item(n));
    // Held: nothing written synchronously; the hold ends by itself.
    expect(batches).toEqual([]);
    await until("the held batch", () => written.length === 5);
    expect(batches).toEqual([[0, 1, 2, 3, 4]]);
  });

  test("a full batch is written without waiting, and the rest follows", async () => {
    const { q, batches, written } = queue(() => true);
    for (let n = 0; n < HOLD_BATCH + 3; n++) q.push(item(n));
    await until("every outcome", () => written.length === HOLD_BATCH + 3);
    expect(batches[0]?.length).toBe(HOLD_BATCH);
    expect(written).toEqual(Array.from({ length: HOLD_BATCH + 3 }, (_, n) => n));
  });

  test("an outcome at an endpoint with nothing lined up is written at once, with those held for another", async () => {
    // Only endpoint "busy" has sends lined up.
    const { q, batches, written } = queue((endpoints) => [...endpoints].every((id) => id === "busy"));
    q.push(item(1, "busy"));
    q.push(item(2, "busy"));
    expect(batches).toEqual([]);
    q.push(item(3, "idle"));
    await until("the outcomes", () => written.length === 3);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  test("nudge writes held outcomes once no sends are lined up; idle() writes them too", async () => {
    let lined = true;
    const { q, written } = queue(() => lined);
    q.push(item(1));
    lined = false;
    q.nudge();
    await until("the nudged outcome", () => written.length === 1);
    lined = true;
    q.push(item(2));
    await q.idle();
    expect(written).toEqual([1, 2]);
  });

  test("unwrittenAt counts an endpoint's outcomes queued and being written, until written", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const q = new CompletionQueue<number>({
      write: async (items) => {
        await gate;
        return items.map(() => true);
      },
      written: () => {},
      logger: quiet,
      clock: () => 0,
    });
    q.push(item(1, "a"));
    q.push(item(2, "b"));
    q.push(item(3, "a"));
    // The first went out at once (nothing held); the others are queued behind its write.
    expect(q.unwrittenAt("a")).toBe(2);
    expect(q.unwrittenAt("b")).toBe(1);
    expect(q.unwrittenAt("c")).toBe(0);
    release();
    await q.idle();
    expect(q.unwrittenAt("a")).toBe(0);
    expect(q.unwrittenAt("b")).toBe(0);
  });
});
