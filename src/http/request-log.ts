import type { Context, MiddlewareHandler, Next } from "hono";
import type { Logger } from "../ops/log.ts";
import type { OpenSpan, Tracing } from "../ops/tracing.ts";
import type { AppEnv } from "./context.ts";

/**
 * The first middleware of every request: its server span when tracing is on (DESIGN §14), and one
 * JSON line per request when the log takes info: method, path, status, duration and the token's
 * id. Never a header value, a token, a query string or a body: those may hold secrets or personal
 * data. One layer for both, and none of its own work when neither is on: a middleware layer of its
 * own per request costs tracing a measurable part of a commit.
 */
export function requestLog(logger: Logger, tracing: Tracing): MiddlewareHandler<AppEnv> {
  async function around(c: Context<AppEnv>, next: Next, span: OpenSpan | null, logged: boolean) {
    const started = performance.now();
    try {
      await next();
    } finally {
      if (span !== null) tracing.serverEnded(span, c);
    }
    if (!logged) return;
    logger.log(c.res.status >= 500 ? "error" : "info", "request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      token: c.get("identity")?.id ?? null,
    });
  }
  return (c, next) => {
    const span = tracing.enabled ? tracing.serverBegun(c.req.raw) : null;
    const logged = logger.enabled("info");
    if (span === null && !logged) return next();
    return around(c, next, span, logged);
  };
}
