// How long a successful commit's response is kept for retries with the same Idempotency-Key
// (DESIGN §3: 24 h). Honoured by the commit (src/commit/commit-op.ts) and by retention, which
// never deletes a commit whose key is still inside this window, whatever OUTBOXD_RETENTION says
// (src/deliveries/retention.ts).
import { invalidField } from "./problem.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** An Idempotency-Key (the header, or an MCP tool's `idempotencyKey`): 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;
export const IDEMPOTENCY_KEY_RULE = "must be 1-255 printable ASCII characters";

/** The header's key, or a 422 naming the header. */
export function checkIdempotencyKey(key: string): string {
  if (!IDEMPOTENCY_KEY.test(key)) throw invalidField("header:Idempotency-Key", IDEMPOTENCY_KEY_RULE);
  return key;
}
