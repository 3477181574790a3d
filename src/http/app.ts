// The Hono application: one fetch handler for Bun and Deno alike.
//
// Documenting a route: put `scopedRoute(deps, {...})` (or `publicRoute({...})`) from
// ./openapi/route.ts before its handler. It enforces the scopes and carries the OpenAPI
// operation: summary, parameters, the request body schema, each answer with its valibot schema
// (./responses.ts) and an example, and the problem statuses. /openapi.json is assembled from the
// routes, and test/http/openapi.test.ts fails, naming the route, for one served without it.
import { Hono } from "hono";
import { catalogWebhooks } from "../event-types/webhooks-doc.ts";
import { mcpRoutes } from "../mcp/http.ts";
import { NO_TRACING } from "../ops/tracing.ts";
import type { AppEnv, HttpDeps } from "./context.ts";
import { errorHandler, onNotFound } from "./errors.ts";
import { openApiRoutes } from "./openapi.ts";
import { rateLimiterFor } from "./rate-limit.ts";
import { requestLog } from "./request-log.ts";
import { commitRoutes } from "./routes/commits.ts";
import { dashboardRoutes } from "./routes/dashboard.ts";
import { endpointRoutes } from "./routes/endpoints.ts";
import { eventTypeRoutes } from "./routes/event-types.ts";
import { eventRoutes } from "./routes/events.ts";
import { historyRoutes } from "./routes/history.ts";
import { ledgerRoutes } from "./routes/ledger.ts";
import { operationRoutes } from "./routes/operations.ts";
import { proposalRoutes } from "./routes/proposals.ts";
import { pullRoutes } from "./routes/pull.ts";
import { snippetRoutes } from "./routes/snippet.ts";
import { tokenRoutes } from "./routes/tokens.ts";

export function createHttpApp(given: HttpDeps): Hono<AppEnv> {
  const deps = {
    ...given,
    limiter: given.limiter !== undefined ? given.limiter : rateLimiterFor(given.config, given.clock),
    tracing: given.tracing ?? NO_TRACING,
  };
  const app = new Hono<AppEnv>();
  // First, so the server span covers everything else.
  app.use(requestLog(deps.logger, deps.tracing));
  app.onError(errorHandler(deps.logger));
  app.notFound(onNotFound);
  operationRoutes(app, deps);
  commitRoutes(app, deps);
  endpointRoutes(app, deps);
  pullRoutes(app, deps);
  eventRoutes(app, deps);
  eventTypeRoutes(app, deps);
  proposalRoutes(app, deps);
  mcpRoutes(app, deps);
  tokenRoutes(app, deps);
  snippetRoutes(app);
  historyRoutes(app, deps);
  ledgerRoutes(app, deps);
  openApiRoutes(app, () => catalogWebhooks(deps.catalog));
  dashboardRoutes(app);
  return app;
}
