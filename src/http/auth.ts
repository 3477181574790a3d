import type { MiddlewareHandler } from "hono";
import { allows } from "../auth/authenticator.ts";
import type { Scope } from "../auth/tokens.ts";
import { problems } from "../lib/problem.ts";
import type { AppEnv, HttpDeps } from "./context.ts";
import { rateLimitedResponse } from "./rate-limit.ts";

/**
 * Requires a bearer token holding one of `scopes` (admin holds all). Every authenticated
 * request then takes one from its token's rate-limit bucket (429 when it is empty).
 */
export function requireScope(deps: HttpDeps, scopes: Scope | readonly Scope[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw problems.unauthorized("send Authorization: Bearer <token>");
    const identity = await deps.auth.authenticate(match[1]);
    if (!identity) throw problems.unauthorized("the token is unknown or revoked");
    c.set("identity", identity);
    const wait = deps.limiter?.take(identity.id) ?? 0;
    if (wait > 0) return rateLimitedResponse(wait);
    if (!allows(identity, scopes)) {
      throw problems.forbidden(`this token lacks the ${[scopes].flat().join(" or ")} scope`);
    }
    await next();
  };
}
