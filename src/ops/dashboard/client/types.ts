// The shapes of the API answers the dashboard reads (types only: erased before the script ships).

export interface Counts {
  pending: number;
  inFlight: number;
  due: number;
  oldestPendingAgeSeconds: number;
  dead: number;
  deadlineExceededTotal: number;
  deliveredLastHour: number;
}
export interface Stats extends Counts {
  endpoints: ({ id: string; kind: "webhook" | "pull" | null } & Counts)[];
}
export interface Bucket {
  start: string;
  delivered: number;
  latencyP50Ms: number | null;
  latencyMaxMs: number | null;
}
export interface Delivery {
  id: string;
  endpointId: string;
  attemptCount: number;
  lastStatusCode: number | null;
  lastError: string | null;
  deadReason: string | null;
  type: string;
  aggregate: string;
  sequence: number;
}
export interface Endpoint {
  id: string;
  /** "pull": consumers poll or stream it (DESIGN §12); it has no url. */
  kind: "webhook" | "pull";
  url: string | null;
  description: string | null;
  disabled: boolean;
  /** operator | gone | failing (DESIGN §19), with the text and since when. */
  disabledReason: string | null;
  disabledDetail: string | null;
  disabledAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  rateLimit: { perSecond: number; burst: number } | null;
  retrySchedule: string[] | null;
  disableAfter: string;
  failingSince: string | null;
  filter: { path: string; op: string; value: unknown }[] | null;
  pending: number;
  dead: number;
}
export interface Attempt {
  at: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responsePrefix: string | null;
  deliveryId: string;
  endpointId: string | null;
  type: string | null;
  aggregate: string | null;
  sequence: number | null;
}
/** One version of a record's history, as the history route answers it. */
export type { VersionView as RecordVersion } from "../../../ledger/history.ts";
/** An event as the events list answers it (the fields the record page shows). */
export interface AggregateEvent {
  id: string;
  type: string;
  sequence: number;
  occurredAt: string;
}
export interface EventWithDeliveries {
  id: string;
  deliveries: { id: string; endpointId: string; status: string; deadReason: string | null }[];
}
export interface Page<T> {
  data: T[];
  next: string | null;
}
export interface ProposalRecordWrite {
  collection: string;
  id: string;
  expectedVersion?: number | null;
  data?: Record<string, unknown> | null;
  delete?: boolean | null;
}
export interface ProposalEvent {
  type: string;
  aggregate?: string | null;
  id?: string | null;
  endpoints?: string[] | null;
  deliverAfter?: string | null;
  deliverBy?: string | null;
  deliverWithin?: string | null;
  payload?: unknown;
}
export interface Proposal {
  id: string;
  status: string;
  summary: string;
  proposedBy: { tokenId: string; tokenName: string };
  createdAt: string;
  expiresAt: string;
  commit: { records?: ProposalRecordWrite[] | null; events?: ProposalEvent[] | null };
  current: {
    collection: string;
    id: string;
    version: number;
    data: Record<string, unknown> | null;
    deleted: boolean;
  }[];
}
