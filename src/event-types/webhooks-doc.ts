// The registered event types as the OpenAPI 3.1 top-level `webhooks` map (DESIGN §9): key = the
// type, `post.requestBody` = the signed body of DESIGN §4 with `data` = the type's schema.
import type { EventTypeCatalog } from "./catalog.ts";
import type { EventTypeRow } from "./store.ts";

type Json = Record<string, unknown>;

/** The `webhooks` map for these types, in type order. */
export function webhooksOf(rows: readonly EventTypeRow[]): Record<string, Json> {
  return Object.fromEntries(rows.map((row) => [row.type, { post: operation(row) }]));
}

/** The map for the catalog as it is now (another process's changes included). */
export async function catalogWebhooks(catalog: EventTypeCatalog): Promise<Record<string, Json>> {
  await catalog.refresh();
  return webhooksOf(catalog.rows());
}

function operation(row: EventTypeRow): Json {
  return {
    summary: row.description ?? row.type,
    ...(row.description ? { description: row.description } : {}),
    operationId: `webhook:${row.type}`,
    tags: ["Webhooks"],
    ...(row.deprecatedAt !== null ? { deprecated: true } : {}),
    parameters: ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => ({
      name,
      in: "header",
      required: true,
      schema: { type: "string" },
      description: "Standard Webhooks header; verify the signature over the raw body before parsing it.",
    })),
    requestBody: {
      required: true,
      content: { "application/json": { schema: body(row) } },
    },
    responses: {
      "2XX": { description: "Delivered. Answer 2xx also for a duplicate or stale event." },
    },
  };
}

function body(row: EventTypeRow): Json {
  return {
    type: "object",
    required: ["id", "type", "timestamp", "aggregate", "sequence", "previousSequence", "data"],
    properties: {
      id: { type: "string", format: "uuid", description: "The event id (webhook-id)." },
      type: { const: row.type },
      timestamp: { type: "string", format: "date-time" },
      aggregate: { type: "string" },
      sequence: { type: "integer", minimum: 1 },
      previousSequence: {
        type: ["integer", "null"],
        description:
          "The same aggregate's latest earlier sequence with a delivery to this endpoint, else null: a gap " +
          "up to it was never meant for this endpoint.",
      },
      data: row.schema === null ? {} : ownResource(row),
    },
  };
}

/**
 * The payload schema as its own schema resource: with an `$id`, its `#/$defs/…` references
 * resolve within it, not against the OpenAPI document it is embedded in.
 */
function ownResource(row: EventTypeRow): unknown {
  const schema = JSON.parse(row.schema ?? "{}") as unknown;
  if (typeof schema !== "object" || schema === null || "$id" in schema) return schema;
  return { $id: `urn:outboxd:event-type:${row.type}`, ...schema };
}
