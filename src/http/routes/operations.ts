// Health, readiness and stats (DESIGN §3 Tokens and operations).
import { pendingMigrations } from "../../db/migrate.ts";
import { stats } from "../../ops/stats.ts";
import { countByStatus } from "../../proposals/store.ts";
import { requireScope } from "../auth.ts";
import type { App, HttpDeps } from "../context.ts";

/** A dispatcher heartbeat older than this makes /readyz fail. */
export const HEARTBEAT_STALE_MS = 30_000;

export function operationRoutes(app: App, deps: HttpDeps): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  app.get("/readyz", async (c) => {
    const checks: Record<string, string> = {};
    try {
      const pending = await deps.db.driver.read(pendingMigrations());
      checks.database = "ok";
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
  });

  app.get("/v1/stats", requireScope(deps, "read"), async (c) =>
    c.json(await deps.db.driver.read(stats(deps.clock()))),
  );

  if (deps.config.metricsPublic) app.get("/metrics", () => metricsResponse(deps));
  else app.get("/metrics", requireScope(deps, "read"), () => metricsResponse(deps));
}

/** GET /metrics; also served alone, without a token, on OUTBOXD_METRICS_PORT. */
export async function metricsResponse(deps: Pick<HttpDeps, "db" | "clock" | "metrics">): Promise<Response> {
  const current = await deps.db.driver.read(stats(deps.clock()));
  const proposals = await deps.db.driver.read(countByStatus());
  return new Response(deps.metrics.render(current, proposals), {
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
  });
}
