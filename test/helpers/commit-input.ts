// A commit as commitOp takes it (after normalizeCommit): one record `orders/<id>` and its events,
// for tests that run the commit operation straight through a Writer.
import type { CommitInput } from "../../src/commit/commit-op.ts";

export function commitInput(
  id: string,
  options: { data?: string; events?: number; idempotency?: CommitInput["idempotency"] } = {},
): CommitInput {
  const now = Date.now();
  return {
    by: { tokenId: "tok_test", tokenName: "test" },
    records: [{ collection: "orders", id, expectedVersion: undefined, data: options.data ?? "{}" }],
    events: Array.from({ length: options.events ?? 1 }, () => ({
      id: undefined,
      type: "order.updated",
      aggregate: `orders/${id}`,
      payload: "{}",
      deliverAfter: null,
      deliverBy: now + 3_600_000,
      endpoints: undefined,
    })),
    idempotency: options.idempotency,
    traceparent: undefined,
    conflictStatus: 409,
    maxDeliveries: 10_000,
    now,
  };
}
