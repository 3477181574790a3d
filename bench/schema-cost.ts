// The costliest schemas the registration limit accepts (src/event-types/schema-cost.ts), each
// against hostile 64 KiB payloads, valid and invalid (DESIGN §17: validating a payload of
// ≤ 64 KiB takes < 50 ms whatever the schema and payload). Prints the median and the slowest of
// ROUNDS validations of each; test/http/schema-cost.test.ts runs the same cases under a deadline.
//   bun bench/schema-cost.ts            # 20 rounds
import { compilePayloadSchema } from "../src/event-types/payload-schema.ts";
import { schemaCost } from "../src/event-types/schema-cost.ts";
import { worstAccepted } from "../test/http/schema-cost-cases.ts";
import { percentile } from "./lib.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 20);
const TARGET_MS = 50;

let worst = 0;
for (const { name, schema, payloads } of worstAccepted()) {
  const validate = compilePayloadSchema(schema);
  const { perValue, scans } = schemaCost(schema);
  for (const [kind, payload] of Object.entries(payloads)) {
    const times: number[] = [];
    let errors = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const start = performance.now();
      errors = validate(payload, "").length;
      times.push(performance.now() - start);
    }
    if ((errors === 0) !== (kind === "valid")) throw new Error(`${name} ${kind}: ${errors} violations`);
    const median = percentile(times, 50);
    worst = Math.max(worst, median);
    const bytes = Buffer.byteLength(JSON.stringify(payload));
    console.log(
      `${name} (${perValue} checks, ${scans} scans per value), ${kind} ${bytes} bytes: median ${median.toFixed(1)} ms, ` +
        `slowest ${Math.max(...times).toFixed(1)} ms, ${errors} violations`,
    );
  }
}
console.log(
  `worst median ${worst.toFixed(1)} ms over ${ROUNDS} rounds (target ${TARGET_MS} ms: ${worst < TARGET_MS ? "met" : "missed"})`,
);
