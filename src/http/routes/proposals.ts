// Proposals (DESIGN §10): an agent proposes, a person approves (or rejects).
import type { Context } from "hono";
import { NO_TRACING } from "../../ops/tracing.ts";
import { requireScope } from "../auth.ts";
import { hasBody, readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { ProposalCreateSchema, ProposalDecisionSchema, ProposalsQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { deprecationHeader } from "./event-types.ts";

export function proposalRoutes(app: App, deps: HttpDeps): void {
  const approve = requireScope(deps, "approve");
  const readers = requireScope(deps, ["propose", "approve", "read"]);

  app.post("/v1/proposals", requireScope(deps, "propose"), async (c) => {
    const raw = await readJson(c, deps.config.maxBodyBytes);
    const body = validate(ProposalCreateSchema, raw);
    const { proposal, replayed, deprecatedAt } = await deps.proposals.propose(
      c.get("identity"),
      body,
      raw,
      c.req.header("idempotency-key"),
    );
    if (replayed) c.header("Idempotent-Replayed", "true");
    deprecationHeader(c, deprecatedAt);
    return c.json(proposal, 201);
  });

  app.get("/v1/proposals", readers, async (c) => {
    const query = validate(ProposalsQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    const proposals = await deps.proposals.list(query.status, limit, query.after);
    return c.json(page(proposals, limit, (p) => p.id));
  });

  app.get("/v1/proposals/:id", readers, async (c) => c.json(await deps.proposals.get(c.req.param("id"))));

  app.post("/v1/proposals/:id/approve", approve, async (c) => {
    const { proposal, deprecatedAt } = await deps.proposals.approve(
      c.get("identity"),
      c.req.param("id"),
      await reason(c, deps),
      (deps.tracing ?? NO_TRACING).requestTraceparent(c.req.raw),
    );
    deprecationHeader(c, deprecatedAt);
    return c.json(proposal);
  });

  app.post("/v1/proposals/:id/reject", approve, async (c) =>
    c.json(await deps.proposals.reject(c.get("identity"), c.req.param("id"), await reason(c, deps))),
  );
}

/** The optional `{"reason"}` body of a decision (an empty body is no reason). */
async function reason(c: Context<AppEnv>, deps: HttpDeps): Promise<string | null> {
  if (!hasBody(c)) return null;
  const body = validate(ProposalDecisionSchema, await readJson(c, deps.config.maxBodyBytes));
  return body.reason ?? null;
}
