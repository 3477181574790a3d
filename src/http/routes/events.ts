// Events, deliveries, the attempt log and dead-letter replay (DESIGN §3 Events and deliveries).
import * as v from "valibot";
import { getEvent, listEvents } from "../../commit/events.ts";
import { deadlineWithin } from "../../deliveries/deadline.ts";
import { getDelivery, listAttempts, listDeliveries } from "../../deliveries/read.ts";
import { replayAllDead } from "../../deliveries/replay.ts";
import { cancelDeliveryWrite, replayDeliveryWrite } from "../../deliveries/writes.ts";
import { invalidField, problems } from "../../lib/problem.ts";
import { hasBody, readJson } from "../body.ts";
import type { App, HttpDeps } from "../context.ts";
import { problemResponse } from "../errors.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { AttemptAnswer, DeliveryAnswer, EventAnswer, pageOf, ReplayedAnswer } from "../responses.ts";
import { DeliveriesQuerySchema, EventsQuerySchema, ReplayManySchema, ReplayOneSchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import {
  ATTEMPT_EXAMPLE,
  DELIVERY_EXAMPLE,
  ENDPOINT_ID,
  EVENT_EXAMPLE,
  PAGED,
  pageExample,
  T,
} from "./examples.ts";

export function eventRoutes(app: App, deps: HttpDeps): void {
  const { db, clock } = deps;
  const tag = "Events and deliveries";
  const deadline = (within: string | null | undefined, now: number) => {
    if (within == null) return now + deps.config.defaultDeliverWithinMs;
    const deadline = deadlineWithin(now, within);
    if (!deadline.ok) throw invalidField("/deliverWithin", deadline.detail);
    return deadline.deliverBy;
  };

  app.get(
    "/v1/events",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "List events",
      description: `${PAGED} With \`aggregate\`, ordered by sequence.`,
      query: EventsQuerySchema,
      answers: {
        200: {
          description: "A page of events.",
          schema: pageOf(EventAnswer),
          example: pageExample(EVENT_EXAMPLE),
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(EventsQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      let after: number | undefined;
      if (query.after !== undefined) {
        after = Number(query.after);
        if (!/^\d+$/.test(query.after))
          throw invalidField("query:after", "is not a cursor this list returned");
      }
      const { events, next } = await db.driver.read(
        listEvents({ aggregate: query.aggregate, type: query.type }, limit, after),
      );
      return c.json({ data: events, next: next === null ? null : String(next) });
    },
  );

  app.get(
    "/v1/events/:id",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "Read an event and its deliveries",
      answers: { 200: { description: "The event.", schema: EventAnswer, example: EVENT_EXAMPLE } },
      problems: [404],
    }),
    async (c) => {
      const id = c.req.param("id");
      const event = await db.driver.read(getEvent(id));
      if (!event) throw problems.notFound(`event ${id} does not exist`);
      return c.json(event);
    },
  );

  app.get(
    "/v1/deliveries",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "List deliveries",
      description: `${PAGED} \`status=dead\` is the dead-letter queue; \`reason\` filters it.`,
      query: DeliveriesQuerySchema,
      answers: {
        200: {
          description: "A page of deliveries.",
          schema: pageOf(DeliveryAnswer),
          example: pageExample(DELIVERY_EXAMPLE),
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(DeliveriesQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      const filter = { status: query.status, endpoint: query.endpoint, reason: query.reason };
      return c.json(
        page(await db.driver.read(listDeliveries(filter, limit, query.after)), limit, (d) => d.id),
      );
    },
  );

  app.get(
    "/v1/deliveries/:id",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "Read a delivery",
      answers: { 200: { description: "The delivery.", schema: DeliveryAnswer, example: DELIVERY_EXAMPLE } },
      problems: [404],
    }),
    async (c) => {
      const id = c.req.param("id");
      const delivery = await db.driver.read(getDelivery(id));
      if (!delivery) throw problems.notFound(`delivery ${id} does not exist`);
      return c.json(delivery);
    },
  );

  app.get(
    "/v1/deliveries/:id/attempts",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "The attempt log of a delivery",
      description: "Oldest first.",
      answers: {
        200: {
          description: "Every attempt kept.",
          schema: v.array(AttemptAnswer),
          example: [ATTEMPT_EXAMPLE],
        },
      },
      problems: [404],
    }),
    async (c) => {
      const id = c.req.param("id");
      if (!(await db.driver.read(getDelivery(id)))) throw problems.notFound(`delivery ${id} does not exist`);
      return c.json(await db.driver.read(listAttempts(id)));
    },
  );

  app.post(
    "/v1/deliveries/replay",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Replay dead deliveries in bulk",
      body: {
        schema: ReplayManySchema,
        example: { status: "dead", endpoint: ENDPOINT_ID, reason: "deadline_exceeded" },
      },
      answers: {
        200: {
          description: "How many went back to pending.",
          schema: ReplayedAnswer,
          example: { replayed: 3 },
        },
      },
      problems: [400, 413, 422],
    }),
    async (c) => {
      const body = validate(ReplayManySchema, await readJson(c, deps.config.maxBodyBytes));
      const filter = {
        endpoint: body.endpoint ?? undefined,
        reason: body.reason ?? undefined,
        since: body.since != null ? Date.parse(body.since) : undefined,
      };
      const now = clock();
      const replayed = await replayAllDead(db, {
        filter,
        now,
        deliverBy: deadline(body.deliverWithin, now),
      });
      if (replayed > 0) deps.dispatch?.wake();
      return c.json({ replayed });
    },
  );

  app.post(
    "/v1/deliveries/:id/replay",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Replay a dead delivery",
      description:
        "Back to `pending` with its attempts reset and a new deadline (`deliverWithin`, default as at commit). " +
        "The body is optional. 409 unless the delivery is dead (`not-dead`), its endpoint exists " +
        "(`endpoint-deleted`) and its event's payload was not erased (`event-erased`); `delivery-not-expanded` " +
        "with `Retry-After` while a deferred fan-out has yet to write its row.",
      body: { schema: ReplayOneSchema, required: false, example: { deliverWithin: "1h" } },
      answers: {
        200: {
          description: "The delivery, pending again.",
          schema: DeliveryAnswer,
          example: {
            ...DELIVERY_EXAMPLE,
            status: "pending",
            attemptCount: 0,
            deadReason: null,
            nextAttemptAt: T,
          },
        },
      },
      problems: [400, 404, 409, 413, 422],
    }),
    async (c) => {
      const id = c.req.param("id");
      const body = hasBody(c) ? validate(ReplayOneSchema, await readJson(c, deps.config.maxBodyBytes)) : {};
      const now = clock();
      const outcome = await db.write(replayDeliveryWrite(id, now, deadline(body.deliverWithin, now)));
      if (outcome === "not_found") throw problems.notFound(`delivery ${id} does not exist`);
      if (outcome === "not_dead")
        throw problems.conflict(
          "not-dead",
          `delivery ${id} is not dead; only dead deliveries can be replayed`,
        );
      if (outcome === "endpoint_deleted")
        throw problems.conflict("endpoint-deleted", `the endpoint of delivery ${id} was deleted`);
      if (outcome === "not_expanded") {
        const problem = problems.conflict(
          "delivery-not-expanded",
          `delivery ${id} is still being written by its commit's fan-out; retry shortly`,
        );
        return problemResponse(problem, { "retry-after": "1" });
      }
      if (outcome === "event_erased") {
        const delivery = await db.driver.read(getDelivery(id));
        throw problems.conflict(
          "event-erased",
          `the payload of event ${delivery?.eventId ?? "?"} was erased; its deliveries cannot be replayed`,
        );
      }
      deps.dispatch?.wake();
      return c.json(await db.driver.read(getDelivery(id)));
    },
  );

  app.post(
    "/v1/deliveries/:id/cancel",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Cancel a pending delivery",
      description:
        'A `pending` delivery that is not leased becomes `dead` with `deadReason: "cancelled"` (visible and ' +
        "replayable); the next event of its aggregate is then free to go. 409 otherwise: `not-pending` for a " +
        "delivered or dead one, `delivery-leased` with `Retry-After` (seconds until the lease ends) for one " +
        "being sent now, whose attempt decides.",
      answers: {
        200: {
          description: "The delivery, now dead.",
          schema: DeliveryAnswer,
          example: { ...DELIVERY_EXAMPLE, status: "dead", deadReason: "cancelled" },
        },
      },
      problems: [404, 409],
    }),
    async (c) => {
      const id = c.req.param("id");
      const now = clock();
      const outcome = await db.write(cancelDeliveryWrite(id, now));
      if (outcome.kind === "not_found") throw problems.notFound(`delivery ${id} does not exist`);
      if (outcome.kind === "not_pending") {
        throw problems.conflict(
          "not-pending",
          `the delivery is ${outcome.status}; only pending deliveries can be cancelled`,
        );
      }
      if (outcome.kind === "leased") {
        // Being sent right now: the attempt decides; the operator may try again once the lease ends.
        const seconds = Math.max(1, Math.ceil((outcome.leaseExpiresAt - now) / 1000));
        const problem = problems.conflict(
          "delivery-leased",
          "the delivery is being sent; retry after its lease",
        );
        return problemResponse(problem, { "retry-after": String(seconds) });
      }
      return c.json(await db.driver.read(getDelivery(id)));
    },
  );
}
