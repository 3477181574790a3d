// The reserved names (DESIGN §9) and the built-in catalog entries: event types starting
// `outboxd.` and aggregates starting `outboxd/` belong to outboxd itself. Clients cannot commit
// or propose them, nor register or remove such a type; outboxd's own events (the endpoint test
// and the endpoint state changes of DESIGN §19) are listed in the catalog with their schemas,
// like any registered type.
import type { EventTypeRow } from "./store.ts";

export const RESERVED_TYPE_PREFIX = "outboxd.";
export const RESERVED_AGGREGATE_PREFIX = "outboxd/";

export const PING_TYPE = "outboxd.ping";
export const ENDPOINT_DISABLED_TYPE = "outboxd.endpoint.disabled";
export const ENDPOINT_ENABLED_TYPE = "outboxd.endpoint.enabled";

export function isReservedType(type: string): boolean {
  return type.startsWith(RESERVED_TYPE_PREFIX);
}

export function isReservedAggregate(aggregate: string): boolean {
  return aggregate.startsWith(RESERVED_AGGREGATE_PREFIX);
}

const nullableString = { type: ["string", "null"] };
const timestampOrNull = { type: ["string", "null"], format: "date-time" };

/** The built-in entries, ordered by type. Their times: when the entries took this form. */
const SINCE = Date.UTC(2026, 11, 7);

function entry(type: string, description: string, schema: object): EventTypeRow {
  return {
    type,
    description,
    schema: JSON.stringify(schema),
    deprecatedAt: null,
    createdAt: SINCE,
    updatedAt: SINCE,
  };
}

export const BUILTIN_EVENT_TYPES: readonly EventTypeRow[] = [
  entry(
    ENDPOINT_DISABLED_TYPE,
    "An endpoint was disabled: by an operator, by a 410 Gone answer, or after failing for its disableAfter. " +
      "Delivered only to endpoints whose eventTypes name an outboxd.* pattern, never to the endpoint it is about.",
    {
      type: "object",
      additionalProperties: false,
      required: ["endpointId", "description", "reason", "failingSince", "lastError"],
      properties: {
        endpointId: { type: "string" },
        description: nullableString,
        reason: { enum: ["operator", "gone", "failing"] },
        failingSince: timestampOrNull,
        lastError: nullableString,
      },
    },
  ),
  entry(
    ENDPOINT_ENABLED_TYPE,
    "A disabled endpoint was enabled again (enable, PATCH, or recover). Delivered only to endpoints whose " +
      "eventTypes name an outboxd.* pattern, never to the endpoint it is about.",
    {
      type: "object",
      additionalProperties: false,
      required: ["endpointId", "description", "enabledBy"],
      properties: {
        endpointId: { type: "string" },
        description: nullableString,
        enabledBy: {
          type: ["object", "null"],
          required: ["tokenId", "tokenName"],
          properties: { tokenId: { type: "string" }, tokenName: { type: "string" } },
        },
      },
    },
  ),
  entry(PING_TYPE, "The signed test event POST /v1/endpoints/{id}/test sends now; never stored.", {
    type: "object",
    additionalProperties: false,
    required: ["endpointId"],
    properties: { endpointId: { type: "string" } },
  }),
];

const BY_TYPE = new Map(BUILTIN_EVENT_TYPES.map((row) => [row.type, row]));

export function builtinEventType(type: string): EventTypeRow | undefined {
  return BY_TYPE.get(type);
}

/**
 * A page of the catalog with the built-in entries in their place: `stored` is the stored page
 * (ordered by type, after `after`, at most `limit`), the answer the merged page of at most `limit`.
 */
export function withBuiltins(
  stored: EventTypeRow[],
  limit: number,
  after: string | undefined,
): EventTypeRow[] {
  const builtins = BUILTIN_EVENT_TYPES.filter((row) => after === undefined || row.type > after);
  const merged = [...stored.filter((row) => !BY_TYPE.has(row.type)), ...builtins];
  merged.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  return merged.slice(0, limit);
}
