// valibot schemas for every request body and query (those of a commit live with the write side,
// src/commit/schemas.ts, and are re-exported here for the routes). They validate requests and (through
// @valibot/to-json-schema) describe them in /openapi.json. Optional fields accept `null` as
// "absent" (DESIGN §3). Objects are strict: unknown fields are refused.
import * as v from "valibot";
import { SCOPES } from "../auth/tokens.ts";
import {
  Aggregate,
  absent,
  CommitSchema,
  Duration,
  EventSchema,
  EventType,
  JsonObject,
  Name,
  RecordWriteSchema,
  Timestamp,
} from "../commit/schemas.ts";
import {
  DisableAfterSchema,
  FilterSchema,
  RateLimitSchema,
  RetryScheduleSchema,
} from "../endpoints/controls.ts";
import { TYPE_PATTERN_PATTERN } from "../endpoints/patterns.ts";
import { parseDuration } from "../lib/duration.ts";

export { Aggregate, CommitSchema, Duration, EventSchema, EventType, Name, RecordWriteSchema, Timestamp };

export const PutRecordSchema = v.strictObject({
  data: JsonObject,
  events: absent(v.array(EventSchema)),
});

const Url = v.pipe(v.string(), v.maxLength(2048, "must be at most 2048 characters"));

/**
 * The endpoint controls of DESIGN §19 (src/endpoints/controls.ts). In a PATCH, `null` on
 * rateLimit, retrySchedule or filter removes the setting; the routes check what depends on the
 * endpoint's kind and the configuration.
 */
function EndpointControls() {
  return {
    rateLimit: absent(
      v.pipe(
        RateLimitSchema,
        v.description("Webhook endpoints only: a token bucket; every attempt start takes one token."),
      ),
    ),
    retrySchedule: absent(
      v.pipe(
        RetryScheduleSchema,
        v.description("The waits before attempts 2, 3, …; the last one repeats until the deadline."),
      ),
    ),
    disableAfter: absent(
      v.pipe(
        DisableAfterSchema,
        v.description(
          'Webhook endpoints only: ≥ 1h or "never" (default "5d"); disabled once failing that long and ≥ 10 failures.',
        ),
      ),
    ),
    filter: absent(
      v.pipe(
        FilterSchema,
        v.description("Conditions on the webhook body that must all hold for an event to be delivered here."),
      ),
    ),
  };
}

/** A webhook endpoint needs `url`; a pull endpoint (DESIGN §12) refuses `url` and `secret` (the route checks). */
export const EndpointCreateSchema = v.strictObject({
  kind: absent(v.picklist(["webhook", "pull"], "must be webhook or pull")),
  url: absent(Url),
  // How many and how long: configurable limits, checked by the routes (patternLimitErrors).
  eventTypes: absent(
    v.array(v.pipe(v.string(), v.regex(TYPE_PATTERN_PATTERN, "must be a type, prefix.* or *"))),
  ),
  description: absent(v.pipe(v.string(), v.maxLength(1000, "must be at most 1000 characters"))),
  secret: absent(
    v.pipe(
      v.string(),
      v.regex(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/, "must be whsec_ followed by base64 of at least 24 bytes"),
    ),
  ),
  ...EndpointControls(),
});

export const EndpointPatchSchema = v.strictObject({
  url: absent(Url),
  eventTypes: EndpointCreateSchema.entries.eventTypes,
  description: EndpointCreateSchema.entries.description,
  disabled: absent(v.boolean()),
  ...EndpointControls(),
});

export const TokenCreateSchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.minLength(1, "must not be empty"),
    v.maxLength(200, "must be at most 200 characters"),
  ),
  scopes: v.pipe(
    v.array(v.picklist(SCOPES, `must be one of ${SCOPES.join(", ")}`)),
    v.minLength(1, "must name a scope"),
  ),
});

/** PUT /v1/event-types/{type} (DESIGN §9): the whole entry; omitted fields reset. */
export const EventTypePutSchema = v.strictObject({
  description: absent(v.pipe(v.string(), v.maxLength(2000, "must be at most 2000 characters"))),
  // A JSON Schema (draft 2020-12) for the payload; compiled (and refused with 422) by src/event-types.
  schema: absent(v.union([JsonObject, v.boolean()], "must be a JSON Schema: an object (or true/false)")),
  deprecated: absent(v.boolean()),
});

/** POST /v1/proposals (DESIGN §10): a commit held for a person's approval. */
export const ProposalCreateSchema = v.strictObject({
  commit: CommitSchema,
  summary: v.pipe(
    v.string(),
    v.minLength(1, "must not be empty"),
    v.maxLength(2000, "must be at most 2000 characters"),
  ),
  expiresIn: absent(Duration),
});

/** POST /v1/proposals/{id}/approve and /reject. */
export const ProposalDecisionSchema = v.strictObject({
  reason: absent(v.pipe(v.string(), v.maxLength(2000, "must be at most 2000 characters"))),
});

export const ReplayOneSchema = v.strictObject({ deliverWithin: absent(Duration) });
/** POST /v1/endpoints/{id}/recover (DESIGN §19). */
export const RecoverSchema = v.strictObject({
  since: Timestamp,
  until: absent(Timestamp),
  deliverWithin: absent(Duration),
});
export const ReplayManySchema = v.strictObject({
  status: v.literal("dead", "only dead deliveries can be replayed"),
  endpoint: absent(v.string()),
  reason: absent(v.string()),
  since: absent(Timestamp),
  deliverWithin: absent(Duration),
});

const Limit = v.pipe(
  v.string(),
  v.regex(/^\d+$/, "must be a whole number"),
  v.transform(Number),
  v.minValue(1, "must be at least 1"),
  v.maxValue(500, "must be at most 500"),
);
export const ListQuery = { limit: v.optional(Limit), after: v.optional(v.string()) };
export const EventsQuerySchema = v.strictObject({
  ...ListQuery,
  aggregate: v.optional(v.string()),
  type: v.optional(v.string()),
});
export const DeliveriesQuerySchema = v.strictObject({
  ...ListQuery,
  status: v.optional(v.picklist(["pending", "delivered", "dead"], "must be pending, delivered or dead")),
  endpoint: v.optional(v.string()),
  reason: v.optional(v.string()),
});
export const PageQuerySchema = v.strictObject(ListQuery);
export const ProposalsQuerySchema = v.strictObject({
  ...ListQuery,
  status: v.optional(
    v.picklist(
      ["pending", "approved", "rejected", "conflicted", "expired"],
      "must be pending, approved, rejected, conflicted or expired",
    ),
  ),
});

/** A duration within [min, max] ms (the schema checks the form, this the range). */
const DurationBetween = (minMs: number, maxMs: number, range: string) =>
  v.pipe(
    Duration,
    v.check((text) => {
      const ms = parseDuration(text);
      return ms !== null && ms >= minMs && ms <= maxMs;
    }, `must be ${range}`),
  );

const LEASE = DurationBetween(1_000, 15 * 60_000, "between 1s and 15m");
const PULL_MAX = v.pipe(
  v.number(),
  v.integer("must be a whole number"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(500, "must be at most 500"),
);

/** POST /v1/endpoints/{id}/poll (DESIGN §12). */
export const PollSchema = v.strictObject({
  max: absent(PULL_MAX),
  wait: absent(DurationBetween(0, 60_000, "at most 60s")),
  lease: absent(LEASE),
});

const LeaseRef = {
  deliveryId: v.pipe(v.string(), v.maxLength(200)),
  leaseToken: v.pipe(v.string(), v.maxLength(200)),
};

/** POST /v1/endpoints/{id}/ack (DESIGN §12): at most 500 answers of each kind per request. */
export const AckSchema = v.strictObject({
  acks: absent(v.pipe(v.array(v.strictObject(LeaseRef)), v.maxLength(500, "must hold at most 500 acks"))),
  nacks: absent(
    v.pipe(
      v.array(
        v.strictObject({
          ...LeaseRef,
          retryAfter: absent(DurationBetween(0, 86_400_000, "at most 24h")),
        }),
      ),
      v.maxLength(500, "must hold at most 500 nacks"),
    ),
  ),
});

const Whole = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** GET /v1/endpoints/{id}/stream?max=&lease= (DESIGN §12). */
export const StreamQuerySchema = v.strictObject({
  max: v.optional(Whole(1, 500)),
  lease: v.optional(LEASE),
});
