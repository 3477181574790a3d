// Events, deliveries, the attempt log and dead-letter replay (DESIGN §3 Events and deliveries).
import { getEvent, listEvents } from "../../commit/events.ts";
import { deadlineWithin } from "../../deliveries/deadline.ts";
import { getDelivery, listAttempts, listDeliveries } from "../../deliveries/read.ts";
import { replayAllDead, replayDelivery } from "../../deliveries/replay.ts";
import { invalidField, problems } from "../../lib/problem.ts";
import { requireScope } from "../auth.ts";
import { hasBody, readJson } from "../body.ts";
import type { App, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { DeliveriesQuerySchema, EventsQuerySchema, ReplayManySchema, ReplayOneSchema } from "../schemas.ts";
import { validate } from "../validation.ts";

export function eventRoutes(app: App, deps: HttpDeps): void {
  const { db, clock } = deps;
  const read = requireScope(deps, "read");
  const admin = requireScope(deps, "admin");
  const deadline = (within: string | null | undefined, now: number) => {
    if (within == null) return now + deps.config.defaultDeliverWithinMs;
    const deadline = deadlineWithin(now, within);
    if (!deadline.ok) throw invalidField("/deliverWithin", deadline.detail);
    return deadline.deliverBy;
  };

  app.get("/v1/events", read, async (c) => {
    const query = validate(EventsQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    let after: number | undefined;
    if (query.after !== undefined) {
      after = Number(query.after);
      if (!/^\d+$/.test(query.after)) throw invalidField("query:after", "is not a cursor this list returned");
    }
    const { events, next } = await db.driver.read(
      listEvents({ aggregate: query.aggregate, type: query.type }, limit, after),
    );
    return c.json({ data: events, next: next === null ? null : String(next) });
  });

  app.get("/v1/events/:id", read, async (c) => {
    const id = c.req.param("id");
    const event = await db.driver.read(getEvent(id));
    if (!event) throw problems.notFound(`event ${id} does not exist`);
    return c.json(event);
  });

  app.get("/v1/deliveries", read, async (c) => {
    const query = validate(DeliveriesQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    const filter = { status: query.status, endpoint: query.endpoint, reason: query.reason };
    return c.json(page(await db.driver.read(listDeliveries(filter, limit, query.after)), limit, (d) => d.id));
  });

  app.get("/v1/deliveries/:id", read, async (c) => {
    const id = c.req.param("id");
    const delivery = await db.driver.read(getDelivery(id));
    if (!delivery) throw problems.notFound(`delivery ${id} does not exist`);
    return c.json(delivery);
  });

  app.get("/v1/deliveries/:id/attempts", read, async (c) => {
    const id = c.req.param("id");
    if (!(await db.driver.read(getDelivery(id)))) throw problems.notFound(`delivery ${id} does not exist`);
    return c.json(await db.driver.read(listAttempts(id)));
  });

  app.post("/v1/deliveries/replay", admin, async (c) => {
    const body = validate(ReplayManySchema, await readJson(c, deps.config.maxBodyBytes));
    const filter = {
      endpoint: body.endpoint ?? undefined,
      reason: body.reason ?? undefined,
      since: body.since != null ? Date.parse(body.since) : undefined,
    };
    const now = clock();
    const replayed = await replayAllDead(db.writer, {
      filter,
      now,
      deliverBy: deadline(body.deliverWithin, now),
    });
    if (replayed > 0) deps.dispatch?.wake();
    return c.json({ replayed });
  });

  app.post("/v1/deliveries/:id/replay", admin, async (c) => {
    const id = c.req.param("id");
    const body = hasBody(c) ? validate(ReplayOneSchema, await readJson(c, deps.config.maxBodyBytes)) : {};
    const now = clock();
    const outcome = await db.writer.write(replayDelivery(id, now, deadline(body.deliverWithin, now)));
    if (outcome === "not_found") throw problems.notFound(`delivery ${id} does not exist`);
    if (outcome === "not_dead")
      throw problems.conflict("not-dead", `delivery ${id} is not dead; only dead deliveries can be replayed`);
    if (outcome === "endpoint_deleted")
      throw problems.conflict("endpoint-deleted", `the endpoint of delivery ${id} was deleted`);
    deps.dispatch?.wake();
    return c.json(await db.driver.read(getDelivery(id)));
  });
}
