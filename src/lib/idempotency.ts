// How long a successful commit's response is kept for retries with the same Idempotency-Key
// (DESIGN §3: 24 h). Honoured by the commit (src/commit/commit-op.ts) and by retention, which
// never deletes a commit whose key is still inside this window, whatever OUTBOXD_RETENTION says
// (src/deliveries/retention.ts).
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
