// completeAndClaim's answer as it crosses back from the writer thread (src/dispatch/writes.ts):
// packed there, unpacked on the dispatcher's thread, through JSON text as the crossing carries
// it, into the same answer with every claimed row in the key order of a claim's own rows.
import { describe, expect, test } from "bun:test";
import type { ClaimedDelivery } from "../../src/deliveries/claim.ts";
import { type ClaimedWithBatch, completeAndClaimAnswer } from "../../src/dispatch/writes.ts";

const crossed = (answer: ClaimedWithBatch) =>
  completeAndClaimAnswer.unpack(JSON.parse(JSON.stringify(completeAndClaimAnswer.pack(answer))));

const row = (n: number, more: Partial<ClaimedDelivery> = {}): ClaimedDelivery => ({
  rid: 100 + n,
  id: `d-${n}`,
  eventId: `e-${n}`,
  endpointId: n % 2 === 0 ? "ep-a" : "ep-b",
  aggregate: `orders/${n}`,
  sequence: n,
  attemptCount: 1,
  availableAt: 1_000 + n,
  deliverBy: 9_000 + n,
  ...more,
});

const event = (n: number) => ({
  id: `e-${n}`,
  type: "order.changed",
  aggregate: `orders/${n}`,
  sequence: n,
  payload: `{"n":${n},"text":"a \\"quoted\\" line\\n"}`,
  occurredAt: 500 + n,
  traceparent: n === 1 ? "00-abc-def-01" : null,
});

const endpoint = (id: string) => ({
  id,
  url: `http://127.0.0.1:9/${id}`,
  secrets: "[]",
  kind: "webhook" as const,
  disabled: 0,
  updatedAt: 7,
});

const answer = (rows: ClaimedDelivery[]): ClaimedWithBatch => ({
  recorded: [true, false, true],
  claimed: {
    owner: "owner:3",
    claimedAt: 1_234,
    rows,
    context: { events: [event(2), event(1), event(3)], endpoints: [endpoint("ep-b"), endpoint("ep-a")] },
  },
  unclaimed: [
    { rid: 7, id: "d-7", endpointId: "ep-a" },
    { rid: 8, id: "d-8", endpointId: "ep-b" },
  ],
});

describe("completeAndClaim's answer across the writer thread", () => {
  test("claimed rows, their events and endpoints, the recorded flags and the hints arrive as they left", () => {
    const sent = answer([row(1), row(2), row(3)]);
    const got = crossed(sent);
    expect(got).toEqual(sent);
    // One object shape per claimed row, whichever way it came: a claim's own key order.
    for (const r of got.claimed?.rows ?? [])
      expect(Object.keys(r)).toEqual([
        "rid",
        "id",
        "eventId",
        "endpointId",
        "aggregate",
        "sequence",
        "attemptCount",
        "availableAt",
        "deliverBy",
      ]);
    expect(Object.keys(got.claimed?.context.events[0] ?? {})).toEqual(Object.keys(event(1)));
  });

  test("an answer without a claim, and one whose rows cannot name their event or rowid, arrive as they left", () => {
    expect(crossed({ recorded: [false], claimed: null, unclaimed: [] })).toEqual({
      recorded: [false],
      claimed: null,
      unclaimed: [],
    });
    // A row whose event is not in the context, one whose queue differs from its event's, one
    // without a rowid: sent whole.
    for (const odd of [row(4), row(1, { sequence: 9 }), row(1, { rid: undefined })]) {
      const sent = answer([row(1), odd]);
      const got = crossed(sent);
      expect(got).toEqual(JSON.parse(JSON.stringify(sent)));
      expect(got.claimed?.rows[1]).toEqual(JSON.parse(JSON.stringify(odd)));
    }
  });
});
