import type { MiddlewareHandler } from "hono";
import type { Logger } from "../ops/log.ts";
import type { AppEnv } from "./context.ts";

/**
 * One JSON line per request: method, path, status, duration and the token's id. Never a
 * header value, a token, a query string or a body: those may hold secrets or personal data.
 */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!logger.enabled("info")) return next();
    const started = performance.now();
    await next();
    logger.log(c.res.status >= 500 ? "error" : "info", "request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      token: c.get("identity")?.id ?? null,
    });
  };
}
