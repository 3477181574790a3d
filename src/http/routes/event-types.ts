// The event-type catalog (DESIGN §9): registered types with a JSON Schema for their payload.
import type { Context } from "hono";
import { builtinEventType, withBuiltins } from "../../event-types/builtin.ts";
import { getEventType, listEventTypes, view } from "../../event-types/store.ts";
import { problems } from "../../lib/problem.ts";
import { readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { EventTypeAnswer, pageOf } from "../responses.ts";
import { EventType, EventTypePutSchema, PageQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { PAGED, pageExample, T } from "./examples.ts";

const PUT_EXAMPLE = {
  description: "A refund was issued for an approved return.",
  schema: {
    type: "object",
    properties: { returnId: { type: "string" }, amount: { type: "integer", minimum: 0 } },
    required: ["returnId", "amount"],
  },
  deprecated: false,
};
const EVENT_TYPE_EXAMPLE = {
  type: "refund.issued",
  ...PUT_EXAMPLE,
  deprecatedAt: null,
  createdAt: T,
  updatedAt: T,
};

export function eventTypeRoutes(app: App, deps: HttpDeps): void {
  const tag = "Event types";
  const params = { type: EventType };

  app.put(
    "/v1/event-types/:type",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Register or replace an event type",
      description:
        "Replaces the whole entry (omitted fields reset). `schema` is a JSON Schema (draft 2020-12) for the " +
        "event payload, at most 64 KiB, references only within itself; one that does not compile is 422. " +
        "Commits and proposals with events of this type are validated against it. Types starting `outboxd.` " +
        "are outboxd's own (409 `reserved-type`).",
      params,
      body: { schema: EventTypePutSchema, example: PUT_EXAMPLE },
      answers: {
        200: { description: "Replaced.", schema: EventTypeAnswer, example: EVENT_TYPE_EXAMPLE },
        201: { description: "Registered.", schema: EventTypeAnswer, example: EVENT_TYPE_EXAMPLE },
      },
      problems: [400, 409, 413, 422],
    }),
    async (c) => {
      const type = validate(EventType, c.req.param("type"), "path:type");
      const body = validate(EventTypePutSchema, await readJson(c, deps.config.maxBodyBytes));
      const { row, created } = await deps.catalog.put({
        type,
        description: body.description ?? null,
        schema: body.schema == null ? null : JSON.stringify(body.schema),
        deprecated: body.deprecated ?? false,
      });
      return c.json(view(row), created ? 201 : 200);
    },
  );

  app.get(
    "/v1/event-types",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "List event types",
      description: `Ordered by type, outboxd's built-in \`outboxd.*\` types included. ${PAGED.replace("Newest first. ", "")}`,
      query: PageQuerySchema,
      answers: {
        200: {
          description: "A page of event types.",
          schema: pageOf(EventTypeAnswer),
          example: pageExample(EVENT_TYPE_EXAMPLE),
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(PageQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      const rows = withBuiltins(
        await deps.db.driver.read(listEventTypes(limit, query.after)),
        limit,
        query.after,
      );
      return c.json(page(rows.map(view), limit, (t) => t.type));
    },
  );

  app.get(
    "/v1/event-types/:type",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "Read an event type",
      params,
      answers: {
        200: { description: "The event type.", schema: EventTypeAnswer, example: EVENT_TYPE_EXAMPLE },
      },
      problems: [404, 422],
    }),
    async (c) => {
      const type = validate(EventType, c.req.param("type"), "path:type");
      const row = builtinEventType(type) ?? (await deps.db.driver.read(getEventType(type)));
      if (!row) throw problems.notFound(`event type ${type} is not registered`);
      return c.json(view(row));
    },
  );

  app.delete(
    "/v1/event-types/:type",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Remove an event type",
      description: "Its events are no longer checked (and in strict mode no longer accepted).",
      params,
      answers: { 204: { description: "Removed.", contentType: null } },
      problems: [404, 409, 422],
    }),
    async (c) => {
      const type = validate(EventType, c.req.param("type"), "path:type");
      if (!(await deps.catalog.delete(type))) throw problems.notFound(`event type ${type} is not registered`);
      return c.body(null, 204);
    },
  );
}

/** RFC 9745: `Deprecation: @<unix seconds>` when an event used a deprecated type. */
export function deprecationHeader(c: Context<AppEnv>, deprecatedAt: number | null): void {
  if (deprecatedAt !== null) c.header("Deprecation", `@${Math.floor(deprecatedAt / 1000)}`);
}
