// Example answers for /openapi.json, shared by the routes that give them. The OpenAPI test
// validates every example against the schema it illustrates.
export const T = "2026-11-29T10:00:00.000Z";
export const ENDPOINT_ID = "ep_01JDZ8V7M2Q4";
export const DELIVERY_ID = "dlv_01JDZ8V7M2Q4";
export const EVENT_ID = "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a";
export const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

export const RECORD_EXAMPLE = {
  collection: "returns",
  id: "r-123",
  version: 4,
  data: { status: "approved" },
  createdAt: T,
  updatedAt: T,
};

export const COMMIT_EXAMPLE = {
  commitId: "cmt_01JDZ8V7M2Q4",
  records: [{ collection: "returns", id: "r-123", version: 4, deleted: false }],
  events: [
    {
      id: EVENT_ID,
      type: "return.approved",
      aggregate: "returns/r-123",
      sequence: 7,
      deliverBy: T,
      deliveries: [{ id: DELIVERY_ID, endpointId: ENDPOINT_ID }],
    },
  ],
};

export const ENDPOINT_EXAMPLE = {
  id: ENDPOINT_ID,
  kind: "webhook",
  url: "https://returns.example.com/hooks/outboxd",
  eventTypes: ["return.*"],
  description: "returns service",
  disabled: false,
  disabledReason: null,
  disabledDetail: null,
  disabledAt: null,
  createdAt: T,
  lastSuccessAt: T,
  lastFailureAt: null,
  rateLimit: { perSecond: 50, burst: 100 },
  retrySchedule: ["5s", "30s", "2m", "10m", "1h"],
  disableAfter: "5d",
  failingSince: null,
  filter: [{ path: "/data/status", op: "in", value: ["approved", "refunded"] }],
  pending: 0,
  dead: 0,
};

export const DELIVERY_IN_EVENT_EXAMPLE = {
  id: DELIVERY_ID,
  endpointId: ENDPOINT_ID,
  status: "delivered",
  attemptCount: 1,
  nextAttemptAt: null,
  lastStatusCode: 200,
  lastError: null,
  deliveredAt: T,
  deadReason: null,
};

export const EVENT_EXAMPLE = {
  id: EVENT_ID,
  type: "return.approved",
  aggregate: "returns/r-123",
  sequence: 7,
  payload: { returnId: "r-123" },
  occurredAt: T,
  deliverAfter: null,
  deliverBy: T,
  commitId: "cmt_01JDZ8V7M2Q4",
  deliveries: [DELIVERY_IN_EVENT_EXAMPLE],
};

export const DELIVERY_EXAMPLE = {
  ...DELIVERY_IN_EVENT_EXAMPLE,
  status: "dead",
  attemptCount: 12,
  lastStatusCode: 500,
  lastError: "HTTP 500",
  deliveredAt: null,
  deadReason: "deadline_exceeded",
  eventId: EVENT_ID,
  type: "return.approved",
  aggregate: "returns/r-123",
  sequence: 7,
};

export const ATTEMPT_EXAMPLE = {
  at: T,
  durationMs: 42,
  statusCode: 200,
  error: null,
  responsePrefix: '{"result":"applied"}',
};

export const PAGED =
  "Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next.";

/** A one-item page. */
export const pageExample = (item: unknown) => ({ data: [item], next: null });
