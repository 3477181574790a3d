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
import { TYPE_PATTERN_PATTERN } from "../endpoints/patterns.ts";

export { Aggregate, CommitSchema, Duration, EventSchema, EventType, Name, RecordWriteSchema, Timestamp };

export const PutRecordSchema = v.strictObject({
  data: JsonObject,
  events: absent(v.array(EventSchema)),
});

export const EndpointCreateSchema = v.strictObject({
  url: v.pipe(v.string(), v.maxLength(2048, "must be at most 2048 characters")),
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
});

export const EndpointPatchSchema = v.strictObject({
  url: absent(EndpointCreateSchema.entries.url),
  eventTypes: EndpointCreateSchema.entries.eventTypes,
  description: EndpointCreateSchema.entries.description,
  disabled: absent(v.boolean()),
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
