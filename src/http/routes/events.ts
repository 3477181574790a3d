// Events, deliveries, the attempt log and dead-letter replay (DESIGN §3 Events and deliveries).
import { getEvent, listEvents } from "../../commit/events.ts";
import {
  getDelivery,
  listAttempts,
  listDeliveries,
  replayDead,
  replayDelivery,
} from "../../dispatch/deliveries.ts";
import { parseDuration } from "../../lib/duration.ts";
import { invalidField, problems } from "../../lib/problem.ts";
import { requireScope } from "../auth.ts";
import { readJson } from "../body.ts";
import type { App, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { DeliveriesQuerySchema, EventsQuerySchema, ReplayManySchema, ReplayOneSchema } from "../schemas.ts";
import { validate } from "../validation.ts";

const REPLAY_CHUNK = 500;
const MAX_DEADLINE = Date.parse("9999-12-31T23:59:59Z");

export function eventRoutes(app: App, deps: HttpDeps): void {
  const { db, clock } = deps;
  const read = requireScope(deps, "read");
  const admin = requireScope(deps, "admin");
  const deadline = (within: string | null | undefined, now: number) => {
    if (within == null) return now + deps.config.defaultDeliverWithinMs;
    // As at commit (normalize.ts): a zero window would send the delivery straight back to dead,
    // and one too large to count (parseDuration's null) must not become "now" either.
    const ms = parseDuration(within);
    if (ms === null || ms <= 0) throw invalidField("/deliverWithin", "must be a positive duration");
    if (now + ms > MAX_DEADLINE) throw invalidField("/deliverWithin", "is too far in the future");
    return now + ms;
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
    let replayed = 0;
    for (;;) {
      const n = await db.writer.write(
        replayDead(filter, now, deadline(body.deliverWithin, now), REPLAY_CHUNK),
      );
      replayed += n;
      if (n < REPLAY_CHUNK) break;
    }
    if (replayed > 0) deps.dispatch?.wake();
    return c.json({ replayed });
  });

  app.post("/v1/deliveries/:id/replay", admin, async (c) => {
    const id = c.req.param("id");
    const hasBody =
      (c.req.header("content-length") ?? "0") !== "0" || c.req.header("transfer-encoding") !== undefined;
    const body = hasBody ? validate(ReplayOneSchema, await readJson(c, deps.config.maxBodyBytes)) : {};
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
