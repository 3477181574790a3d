// valibot schemas for every request body and query. They validate requests and (through
// @valibot/to-json-schema) describe them in /openapi.json. Optional fields accept `null` as
// "absent" (DESIGN §3). Objects are strict: unknown fields are refused.
import * as v from "valibot";
import { SCOPES } from "../auth/tokens.ts";
import { EVENT_TYPE_PATTERN, TYPE_PATTERN_PATTERN } from "../endpoints/patterns.ts";
import { DURATION_PATTERN } from "../lib/duration.ts";

const NAME = /^[A-Za-z0-9._:-]{1,128}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

const absent = <S extends v.GenericSchema>(schema: S) => v.nullish(schema);

export const Name = v.pipe(v.string(), v.regex(NAME, "must be 1-128 characters of A-Z a-z 0-9 . _ : -"));
export const Duration = v.pipe(
  v.string(),
  v.regex(DURATION_PATTERN, "must be a duration like 30s, 5m, 24h or 7d"),
);
export const Timestamp = v.pipe(
  v.string(),
  v.regex(TIMESTAMP, "must be an RFC 3339 timestamp like 2026-11-29T10:00:00Z"),
  v.check(isRealDateTime, "must be a valid date and time"),
);

/** Date.parse rolls impossible dates over (2026-02-30 is taken as 2026-03-02); refuse them. */
function isRealDateTime(text: string): boolean {
  if (Number.isNaN(Date.parse(text))) return false;
  const [year = 0, month = 0, day = 0] = text.slice(0, 10).split("-").map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth;
}

// A JSON object, passed through as parsed. Not v.record: it accepts an array as an index-keyed
// object ([1, 2] → {"0": 1, "1": 2}) and silently drops the keys `constructor`, `prototype`
// and `__proto__`, which are ordinary keys in a client's JSON document.
const JsonObject = v.custom<Record<string, unknown>>(
  (input) => typeof input === "object" && input !== null && !Array.isArray(input),
  "must be a JSON object",
);
const Uuid = v.pipe(v.string(), v.uuid("must be a UUID"));
export const EventType = v.pipe(
  v.string(),
  v.maxLength(200, "must be at most 200 characters"),
  v.regex(EVENT_TYPE_PATTERN, "must be dot-separated segments of A-Z a-z 0-9 _ : -, e.g. return.approved"),
);
export const Aggregate = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.maxLength(255, "must be at most 255 characters"),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"),
);

export const RecordWriteSchema = v.strictObject({
  collection: Name,
  id: Name,
  expectedVersion: absent(
    v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0, "must be 0 or more")),
  ),
  data: absent(JsonObject),
  delete: absent(v.boolean()),
});

export const EventSchema = v.strictObject({
  id: absent(Uuid),
  type: EventType,
  aggregate: absent(Aggregate),
  payload: absent(v.unknown()),
  deliverBy: absent(Timestamp),
  deliverWithin: absent(Duration),
  deliverAfter: absent(Timestamp),
  endpoints: absent(v.pipe(v.array(v.string()), v.maxLength(100, "must list at most 100 endpoints"))),
});

export const CommitSchema = v.strictObject({
  records: absent(v.array(RecordWriteSchema)),
  events: absent(v.array(EventSchema)),
});

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
