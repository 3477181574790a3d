// Several consumers on one pull endpoint (DESIGN §12, §1.3): never two deliveries of one aggregate
// leased at once, each aggregate's events applied in sequence order, nothing lost when a consumer
// process is killed mid-batch.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "bun";
import { commitEvents, deliveryRow, exec, fate } from "../dispatch/harness.ts";
import { REPO } from "../helpers/process.ts";
import { type Pulled, type PullRig, startPullRig } from "./helpers.ts";

const AGGREGATES = 25;
const ROUNDS = 8;
const POLLERS = 4;
const SEED = 20261201;

describe("consumers of one pull endpoint", () => {
  let rig: PullRig;
  beforeAll(async () => {
    rig = await startPullRig({ OUTBOXD_RETRY_BASE: "10ms", OUTBOXD_RETRY_CAP: "50ms" });
  });
  afterAll(async () => {
    await rig.stop();
  });

  test("concurrent pollers never hold two deliveries of one aggregate, and apply each in order", async () => {
    const total = AGGREGATES * ROUNDS;
    const held = new Map<string, number>();
    const applied = new Map<string, number>();
    const violations: string[] = [];
    let nacks = 0;
    const consume = async (poller: number) => {
      while ([...applied.values()].reduce((n, s) => n + s, 0) < total) {
        const { data } = await rig.poll({ max: 7, wait: "2s", lease: "30s" });
        for (const pulled of data) {
          const { aggregate, sequence } = pulled.event;
          const holder = held.get(aggregate);
          if (holder !== undefined)
            violations.push(`${aggregate}#${sequence} leased to ${poller} while ${holder} holds it`);
          held.set(aggregate, poller);
          const last = applied.get(aggregate) ?? 0;
          if (sequence !== last + 1) violations.push(`${aggregate}: got ${sequence} after ${last}`);
        }
        // Apply (some fail once: nacked, they come again), then answer. A hold ends before the answer
        // is sent: from then on the server may lease the aggregate's next event.
        await Promise.resolve();
        const acks: { deliveryId: string; leaseToken: string }[] = [];
        const refused: { deliveryId: string; leaseToken: string; retryAfter: string }[] = [];
        for (const pulled of data) {
          held.delete(pulled.event.aggregate);
          const ref = { deliveryId: pulled.deliveryId, leaseToken: pulled.leaseToken };
          if (pulled.attempt === 1 && fate(SEED, pulled.deliveryId) < 0.1) {
            refused.push({ ...ref, retryAfter: "0s" });
            nacks += 1;
          } else {
            acks.push(ref);
            applied.set(pulled.event.aggregate, pulled.event.sequence);
          }
        }
        if (data.length > 0) {
          const answer = await rig.ack({ acks, nacks: refused });
          expect(answer.stale).toEqual([]);
        }
      }
    };
    const committing = (async () => {
      for (let round = 0; round < ROUNDS; round++) {
        await commitEvents(
          rig.server,
          Array.from({ length: AGGREGATES }, (_, a) => ({
            aggregate: `order/${a}`,
            endpoints: [rig.endpointId],
          })),
        );
      }
    })();
    await Promise.all([committing, ...Array.from({ length: POLLERS }, (_, i) => consume(i))]);
    expect(violations).toEqual([]);
    expect(nacks).toBeGreaterThan(0);
    for (let a = 0; a < AGGREGATES; a++) expect(applied.get(`order/${a}`)).toBe(ROUNDS);
  });

  test("a consumer killed mid-batch loses nothing: its unacked deliveries come again", async () => {
    const events = await commitEvents(
      rig.server,
      Array.from({ length: 10 }, (_, i) => ({ aggregate: `crash/${i}`, endpoints: [rig.endpointId] })),
    );
    const ids = events.map((e) => e.deliveries[0]?.id as string);
    const child = spawn({
      cmd: [
        process.execPath,
        "test/pull/consumer-child.ts",
        rig.server.url,
        rig.consumeToken,
        rig.endpointId,
      ],
      cwd: REPO,
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = child.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`consumer exited: ${await new Response(child.stderr).text()}`);
      out += new TextDecoder().decode(value);
    }
    const report = JSON.parse(out) as { leased: string[]; acked: string[] };
    expect(report.leased.sort()).toEqual([...ids].sort());
    child.kill("SIGKILL");
    await child.exited;
    const unacked = ids.filter((id) => !report.acked.includes(id));
    for (const id of report.acked) expect((await deliveryRow(rig.server, id)).status).toBe("delivered");
    for (const id of unacked) expect((await deliveryRow(rig.server, id)).lease_owner).not.toBeNull();
    // Its leases run out (backdated instead of waited for); the sweep makes them failed attempts.
    await exec(
      rig.server,
      "UPDATE deliveries SET lease_expires_at = :past WHERE id IN (SELECT value FROM json_each(:ids))",
      {
        ids: JSON.stringify(unacked),
        past: Date.now() - 1,
      },
    );
    const again: Pulled[] = [];
    while (again.length < unacked.length) {
      const { data } = await rig.poll({ max: 10, wait: "10s" });
      again.push(...data);
    }
    expect(again.map((p) => p.deliveryId).sort()).toEqual([...unacked].sort());
    expect(again.every((p) => p.attempt === 2)).toBe(true);
    await rig.ack({ acks: again.map(({ deliveryId, leaseToken }) => ({ deliveryId, leaseToken })) });
    for (const id of ids) expect((await deliveryRow(rig.server, id)).status).toBe("delivered");
  });
});
