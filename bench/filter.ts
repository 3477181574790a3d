// The cost of an endpoint filter at fan-out (DESIGN §19 target: a filter of 20 conditions costs
// ≤ 5 µs per event). A microbenchmark of the compiled filter as the commit runs it: one parse of
// the payload per event (shared by every endpoint's filter) and 20 conditions that all hold, so
// none is skipped. The median of 5 rounds.
// `npm run bench -- --only=controls` runs it (bench/run.ts); alone:
//   bun bench/filter.ts
import { type Condition, compileFilter } from "../src/endpoints/controls.ts";

export const FILTER_TARGET_US = 5;
const EVENTS = 200_000;

const payload = JSON.stringify({
  returnId: "r-123",
  status: "approved",
  amount: 4_250,
  currency: "EUR",
  customer: { id: "c-9", tier: "gold", country: "DE" },
  lines: [
    { sku: "A-1", qty: 1 },
    { sku: "B-2", qty: 3 },
  ],
  note: null,
});
const conditions: Condition[] = [
  { path: "/type", op: "prefix", value: "return." },
  { path: "/aggregate", op: "prefix", value: "returns/" },
  { path: "/data/status", op: "in", value: ["approved", "refunded", "closed"] },
  { path: "/data/amount", op: "gt", value: 100 },
  { path: "/data/amount", op: "lt", value: 100_000 },
  { path: "/data/currency", op: "eq", value: "EUR" },
  { path: "/data/currency", op: "ne", value: "USD" },
  { path: "/data/customer/tier", op: "in", value: ["gold", "platinum"] },
  { path: "/data/customer/country", op: "eq", value: "DE" },
  { path: "/data/customer/id", op: "prefix", value: "c-" },
  { path: "/data/lines/0/sku", op: "eq", value: "A-1" },
  { path: "/data/lines/1/qty", op: "gt", value: 2 },
  { path: "/data/lines/2", op: "exists", value: false },
  { path: "/data/note", op: "exists", value: true },
  { path: "/data/returnId", op: "ne", value: "r-0" },
  { path: "/data/customer", op: "eq", value: { country: "DE", tier: "gold", id: "c-9" } },
  { path: "/sequence", op: "gt", value: 0 },
  { path: "/data/missing", op: "ne", value: 1 },
  { path: "/data/lines/0/qty", op: "lt", value: 2 },
  { path: "/type", op: "ne", value: "return.rejected" },
];

export interface FilterCost {
  conditions: number;
  /** Median of the rounds, µs per event, the payload's parse included. */
  usPerEvent: number;
  rounds: number[];
  met: boolean;
}

function round(filter: ReturnType<typeof compileFilter>): number {
  let passed = 0;
  const started = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    const event = {
      id: "e",
      type: "return.approved",
      occurredAt: 0,
      aggregate: "returns/r-123",
      sequence: i + 1,
      payload,
    };
    if (filter(event, {})) passed++;
  }
  const us = ((performance.now() - started) * 1000) / EVENTS;
  if (passed !== EVENTS) throw new Error(`expected every event to pass, ${passed} did`);
  return us;
}

/** A warm-up round, then the median of 5 rounds of EVENTS events each. */
export function filterCost(): FilterCost {
  const filter = compileFilter(conditions);
  round(filter);
  const rounds = Array.from({ length: 5 }, () => Number(round(filter).toFixed(3))).sort((a, b) => a - b);
  const usPerEvent = rounds[2] as number;
  return { conditions: conditions.length, usPerEvent, rounds, met: usPerEvent <= FILTER_TARGET_US };
}

if (import.meta.main) {
  const cost = filterCost();
  console.log(
    `filter of ${cost.conditions} conditions: ${cost.usPerEvent.toFixed(2)} µs per event (payload parse included; ` +
      `rounds ${cost.rounds.map((r) => r.toFixed(2)).join(", ")}; target ≤ ${FILTER_TARGET_US} µs) ${cost.met ? "MET" : "MISSED"}`,
  );
}
