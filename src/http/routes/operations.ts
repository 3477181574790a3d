// Health, readiness and stats (DESIGN §3 Tokens and operations).
import { pendingMigrations } from "../../db/migrate.ts";
import { stats } from "../../ops/stats.ts";
import { countByStatus } from "../../proposals/store.ts";
import type { App, HttpDeps } from "../context.ts";
import { publicRoute, scopedRoute } from "../openapi/route.ts";
import { HealthAnswer, ReadyAnswer, StatsAnswer } from "../responses.ts";

/** A dispatcher heartbeat older than this makes /readyz fail. */
export const HEARTBEAT_STALE_MS = 30_000;

const STATS_COUNTS = {
  pending: 3,
  inFlight: 1,
  due: 1,
  oldestPendingAgeSeconds: 12.5,
  dead: 1,
  deadlineExceededTotal: 1,
  deliveredLastHour: 420,
};
const READY_EXAMPLE = { status: "ready", checks: { database: "ok", migrations: "ok", dispatcher: "ok" } };

export function operationRoutes(app: App, deps: HttpDeps): void {
  app.get(
    "/healthz",
    publicRoute({
      tag: "Public",
      summary: "The process is up",
      answers: { 200: { description: "Up.", schema: HealthAnswer, example: { status: "ok" } } },
    }),
    (c) => c.json({ status: "ok" }),
  );

  app.get(
    "/readyz",
    publicRoute({
      tag: "Public",
      summary: "Ready to serve",
      description:
        "Database reachable and its last write not refused for a full disk, migrations applied, dispatcher heartbeat fresh.",
      answers: {
        200: { description: "Ready.", schema: ReadyAnswer, example: READY_EXAMPLE },
        503: {
          description: "Not ready: `checks` says which check failed.",
          schema: ReadyAnswer,
          example: {
            status: "not ready",
            checks: { ...READY_EXAMPLE.checks, dispatcher: "heartbeat stale" },
          },
        },
      },
    }),
    async (c) => {
      const checks: Record<string, string> = {};
      try {
        const pending = await deps.db.driver.read(pendingMigrations());
        checks.database = deps.db.storageFull ? "storage full: the last write failed with SQLITE_FULL" : "ok";
        checks.migrations = pending.length === 0 ? "ok" : `pending: ${pending.join(", ")}`;
      } catch (error) {
        checks.database = `unreachable: ${(error as Error).message}`;
      }
      if (deps.dispatch) {
        const beat = deps.dispatch.heartbeatAt();
        checks.dispatcher =
          beat === null ? "not started" : deps.clock() - beat > HEARTBEAT_STALE_MS ? "heartbeat stale" : "ok";
      }
      const ready = Object.values(checks).every((v) => v === "ok");
      return c.json({ status: ready ? "ready" : "not ready", checks }, ready ? 200 : 503);
    },
  );

  app.get(
    "/v1/stats",
    scopedRoute(deps, {
      scopes: "read",
      tag: "Operations",
      summary: "The state of the outbox",
      description:
        "`pending` counts every undelivered, non-dead delivery (in flight included: for a pull endpoint, " +
        "leased to a consumer); the oldest pending age is measured from the later of the commit and `deliverAfter`.",
      answers: {
        200: {
          description: "Totals and the same per endpoint.",
          schema: StatsAnswer,
          example: {
            ...STATS_COUNTS,
            endpoints: [{ id: "ep_01JDZ8V7M2Q4", kind: "webhook", ...STATS_COUNTS }],
          },
        },
      },
    }),
    async (c) => c.json(await deps.db.driver.read(stats(deps.clock()))),
  );

  app.get(
    "/metrics",
    scopedRoute(deps, {
      scopes: "read",
      publicWhen: { on: deps.config.metricsPublic, setting: "OUTBOXD_METRICS_PUBLIC=1" },
      tag: "Operations",
      summary: "Prometheus metrics",
      description: "Also served without a token on `OUTBOXD_METRICS_PORT` when set.",
      answers: { 200: { description: "Prometheus text format.", contentType: "text/plain" } },
    }),
    () => metricsResponse(deps),
  );
}

/** GET /metrics; also served alone, without a token, on OUTBOXD_METRICS_PORT. */
export async function metricsResponse(deps: Pick<HttpDeps, "db" | "clock" | "metrics">): Promise<Response> {
  const current = await deps.db.driver.read(stats(deps.clock()));
  const proposals = await deps.db.driver.read(countByStatus());
  return new Response(deps.metrics.render(current, proposals), {
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
  });
}
