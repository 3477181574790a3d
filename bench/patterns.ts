// A hostile JSON Schema pattern against a hostile payload (DESIGN §17: validating a payload of
// ≤ 64 KiB takes < 50 ms whatever the schema; the target here is 5 ms). `^(a|a)+$` against a
// string of n-1 "a" and one "!" makes a backtracking engine try 2^n ways; payload schemas run
// on the linear-time engine (src/event-types/linear-regexp.ts). Prints the median and the
// slowest of ROUNDS validations of a 64 KiB payload, and JavaScript's own RegExp on short
// strings for comparison.
//   bun bench/patterns.ts            # 50 rounds
import { compilePayloadSchema } from "../src/event-types/payload-schema.ts";
import { percentile } from "./lib.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 50);
const TARGET_MS = 5;
const HOSTILE = "^(a|a)+$";

const validate = compilePayloadSchema({
  type: "object",
  properties: { s: { type: "string", pattern: HOSTILE } },
  patternProperties: { [HOSTILE]: { type: "integer" } },
});
const text = `${"a".repeat(64 * 1024 - 16)}!`;
const payload = { s: text };
const times: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const start = performance.now();
  const errors = validate(payload, "");
  times.push(performance.now() - start);
  if (errors.length !== 1) throw new Error(`expected one violation, got ${errors.length}`);
}
const median = percentile(times, 50);
console.log(
  `linear engine, ${HOSTILE} on ${text.length} characters: median ${median.toFixed(2)} ms, ` +
    `slowest ${Math.max(...times).toFixed(2)} ms over ${ROUNDS} rounds (target ${TARGET_MS} ms: ${median <= TARGET_MS ? "met" : "missed"})`,
);
const native = new RegExp(HOSTILE, "u");
for (const n of [20, 22, 24]) {
  const start = performance.now();
  native.test(`${"a".repeat(n - 1)}!`);
  console.log(`JavaScript RegExp on ${n} characters: ${(performance.now() - start).toFixed(1)} ms`);
}
