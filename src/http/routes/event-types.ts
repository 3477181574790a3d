// The event-type catalog (DESIGN §9): registered types with a JSON Schema for their payload.
import type { Context } from "hono";
import { getEventType, listEventTypes, view } from "../../event-types/store.ts";
import { problems } from "../../lib/problem.ts";
import { requireScope } from "../auth.ts";
import { readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { EventType, EventTypePutSchema, PageQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";

export function eventTypeRoutes(app: App, deps: HttpDeps): void {
  const admin = requireScope(deps, "admin");
  const read = requireScope(deps, "read");

  app.put("/v1/event-types/:type", admin, async (c) => {
    const type = validate(EventType, c.req.param("type"), "path:type");
    const body = validate(EventTypePutSchema, await readJson(c, deps.config.maxBodyBytes));
    const { row, created } = await deps.catalog.put({
      type,
      description: body.description ?? null,
      schema: body.schema == null ? null : JSON.stringify(body.schema),
      deprecated: body.deprecated ?? false,
    });
    return c.json(view(row), created ? 201 : 200);
  });

  app.get("/v1/event-types", read, async (c) => {
    const query = validate(PageQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    const rows = await deps.db.driver.read(listEventTypes(limit, query.after));
    return c.json(page(rows.map(view), limit, (t) => t.type));
  });

  app.get("/v1/event-types/:type", read, async (c) => {
    const type = validate(EventType, c.req.param("type"), "path:type");
    const row = await deps.db.driver.read(getEventType(type));
    if (!row) throw problems.notFound(`event type ${type} is not registered`);
    return c.json(view(row));
  });

  app.delete("/v1/event-types/:type", admin, async (c) => {
    const type = validate(EventType, c.req.param("type"), "path:type");
    if (!(await deps.catalog.delete(type))) throw problems.notFound(`event type ${type} is not registered`);
    return c.body(null, 204);
  });
}

/** RFC 9745: `Deprecation: @<unix seconds>` when an event used a deprecated type. */
export function deprecationHeader(c: Context<AppEnv>, deprecatedAt: number | null): void {
  if (deprecatedAt !== null) c.header("Deprecation", `@${Math.floor(deprecatedAt / 1000)}`);
}
