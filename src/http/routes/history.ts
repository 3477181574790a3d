// outboxd extensions for the dashboard (docs/design.md): the last hour per minute and the attempt
// log across deliveries. Read-only, `read` scope.
import { invalidField } from "../../lib/problem.ts";
import { recentAttempts, statsHistory } from "../../ops/history.ts";
import type { App, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT } from "../pagination.ts";
import { AttemptLogAnswer, pageOf, StatsHistoryAnswer } from "../responses.ts";
import { PageQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { ATTEMPT_EXAMPLE, DELIVERY_ID, ENDPOINT_ID, EVENT_ID, PAGED, pageExample } from "./examples.ts";

export function historyRoutes(app: App, deps: HttpDeps): void {
  app.get(
    "/v1/stats/history",
    scopedRoute(deps, {
      scopes: "read",
      tag: "Operations",
      summary: "Throughput and latency per minute over the last hour",
      description:
        "outboxd extension (dashboard). 60 buckets, oldest first, the current minute last: deliveries marked " +
        "delivered in that minute and their latency from becoming due (the later of commit and `deliverAfter`, " +
        "or the replay) to delivered; the median to two significant digits.",
      extension: true,
      answers: {
        200: {
          description: "Per-minute buckets.",
          schema: StatsHistoryAnswer,
          example: {
            from: "2026-11-29T09:01:00.000Z",
            to: "2026-11-29T10:01:00.000Z",
            bucketSeconds: 60,
            buckets: [
              { start: "2026-11-29T10:00:00.000Z", delivered: 7, latencyP50Ms: 12, latencyMaxMs: 340 },
            ],
          },
        },
      },
    }),
    async (c) => c.json(await deps.db.driver.read(statsHistory(deps.clock()))),
  );

  app.get(
    "/v1/attempts",
    scopedRoute(deps, {
      scopes: "read",
      tag: "Operations",
      summary: "The attempt log across deliveries",
      description: `outboxd extension (dashboard). ${PAGED}`,
      extension: true,
      query: PageQuerySchema,
      answers: {
        200: {
          description: "A page of attempts, each with its delivery and event.",
          schema: pageOf(AttemptLogAnswer),
          example: pageExample({
            ...ATTEMPT_EXAMPLE,
            deliveryId: DELIVERY_ID,
            endpointId: ENDPOINT_ID,
            eventId: EVENT_ID,
            type: "return.approved",
            aggregate: "returns/r-123",
            sequence: 7,
          }),
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(PageQuerySchema, c.req.query());
      if (query.after !== undefined && !/^\d{1,15}$/.test(query.after)) {
        throw invalidField("query:after", "is not a cursor this list returned");
      }
      const after = query.after === undefined ? undefined : Number(query.after);
      return c.json(await deps.db.driver.read(recentAttempts(query.limit ?? DEFAULT_LIMIT, after)));
    },
  );
}
