// What the sender needs for a batch of claimed deliveries: their events and endpoints, read in
// two statements (the claim itself lives in src/deliveries/claim.ts).
import { all, type Op } from "../db/op.ts";

/** What a webhook is made of: the event as committed. */
export interface EventToSend {
  id: string;
  type: string;
  aggregate: string;
  sequence: number;
  payload: string;
  occurredAt: number;
  traceparent: string | null;
}

export interface EndpointToSend {
  id: string;
  url: string;
  secrets: string;
  kind: "webhook" | "pull";
  disabled: number;
  /** Changes with every change of the endpoint (url, secrets, disabled): its version. */
  updatedAt: number;
  /** DESIGN §19 controls, JSON text or null: the waits between attempts, the token bucket. */
  retrySchedule: string | null;
  rateLimit: string | null;
}

/** What the sends of a batch of claimed deliveries need: their events and endpoints. */
export interface SendContext {
  events: EventToSend[];
  endpoints: EndpointToSend[];
}

/** The events and endpoints a batch of claimed deliveries needs to be sent. */
export function* loadSendContext(eventIds: string[], endpointIds: string[]): Op<SendContext> {
  const events = yield* all<EventToSend>(
    `SELECT id, type, aggregate, sequence, payload, occurred_at AS occurredAt, traceparent
     FROM events WHERE id IN (SELECT value FROM json_each(:ids))`,
    { ids: JSON.stringify(eventIds) },
  );
  const endpoints = yield* all<EndpointToSend>(
    `SELECT id, url, secrets, kind, disabled, updated_at AS updatedAt, retry_schedule AS retrySchedule,
       rate_limit AS rateLimit
     FROM endpoints WHERE id IN (SELECT value FROM json_each(:ids))`,
    { ids: JSON.stringify(endpointIds) },
  );
  return { events, endpoints };
}
