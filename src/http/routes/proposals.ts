// Proposals (DESIGN §10): an agent proposes, a person approves (or rejects).
import type { Context } from "hono";
import { NO_TRACING } from "../../ops/tracing.ts";
import { hasBody, readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { ProposalAnswer, ProposalListItem, ProposalWithCurrentAnswer, pageOf } from "../responses.ts";
import { ProposalCreateSchema, ProposalDecisionSchema, ProposalsQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { deprecationHeader } from "./event-types.ts";
import { COMMIT_EXAMPLE, PAGED, pageExample, T } from "./examples.ts";

const CREATE_EXAMPLE = {
  summary: "Approve return r-123: item arrived unused, within 30 days.",
  commit: {
    records: [{ collection: "returns", id: "r-123", expectedVersion: 3, data: { status: "approved" } }],
    events: [{ type: "return.approved", payload: { returnId: "r-123", amount: 1999 } }],
  },
  expiresIn: "24h",
};
const PROPOSAL_EXAMPLE = {
  id: "prp_01JDZ8V7M2Q4",
  status: "pending",
  summary: CREATE_EXAMPLE.summary,
  commit: CREATE_EXAMPLE.commit,
  proposedBy: { tokenId: "tok_01JDZ8V7M2Q4", tokenName: "returns-agent" },
  createdAt: T,
  expiresAt: "2026-11-30T10:00:00.000Z",
  decidedAt: null,
  decidedBy: null,
  reason: null,
  result: null,
};
const DECIDED_BY = { tokenId: "tok_01JDZ8W1A9B2", tokenName: "alice" };
const { commit: _commit, ...LIST_ITEM_EXAMPLE } = PROPOSAL_EXAMPLE;
const TAG = "Proposals";
const READERS = ["propose", "approve", "read"] as const;

export function proposalRoutes(app: App, deps: HttpDeps): void {
  app.post(
    "/v1/proposals",
    scopedRoute(deps, {
      scopes: "propose",
      tag: TAG,
      summary: "Propose a commit for a person's approval",
      description:
        "The commit is validated now as a commit would be (event-type schemas included; pointers under " +
        "`/commit`), and every record write must carry `expectedVersion`. Nothing is written until a token with " +
        "`approve` (not this one) approves it. `Idempotency-Key` has its own namespace, apart from commits.",
      headers: { "Idempotency-Key": "1-255 characters; a retry with the same body gets the same proposal." },
      body: { schema: ProposalCreateSchema, example: CREATE_EXAMPLE },
      answers: {
        201: {
          description: "The pending proposal.",
          schema: ProposalAnswer,
          example: PROPOSAL_EXAMPLE,
          headers: { "Idempotent-Replayed": "`true` on a retry answered from the first request." },
        },
      },
      problems: [400, 409, 413, 422],
    }),
    async (c) => {
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
    },
  );

  app.get(
    "/v1/proposals",
    scopedRoute(deps, {
      scopes: READERS,
      tag: TAG,
      summary: "List proposals",
      description: `Items leave out \`commit\`. ${PAGED}`,
      query: ProposalsQuerySchema,
      answers: {
        200: {
          description: "A page of proposals.",
          schema: pageOf(ProposalListItem),
          example: pageExample(LIST_ITEM_EXAMPLE),
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(ProposalsQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      const proposals = await deps.proposals.list(query.status, limit, query.after);
      return c.json(page(proposals, limit, (p) => p.id));
    },
  );

  app.get(
    "/v1/proposals/:id",
    scopedRoute(deps, {
      scopes: READERS,
      tag: TAG,
      summary: "Read a proposal, with each record's current state",
      description: "`current` holds each record of the commit as it is now: the diff's left side.",
      answers: {
        200: {
          description: "The proposal.",
          schema: ProposalWithCurrentAnswer,
          example: {
            ...PROPOSAL_EXAMPLE,
            current: [
              {
                collection: "returns",
                id: "r-123",
                version: 3,
                data: { status: "requested" },
                deleted: false,
              },
            ],
          },
        },
      },
      problems: [404],
    }),
    async (c) => c.json(await deps.proposals.get(c.req.param("id"))),
  );

  app.post(
    "/v1/proposals/:id/approve",
    scopedRoute(deps, {
      scopes: "approve",
      tag: TAG,
      summary: "Approve a proposal: apply its commit",
      description:
        "Validates the commit again and applies it in one transaction, re-checking every `expectedVersion`; " +
        "deadlines and fan-out count from now; the commit is the approver's. A changed record is 409 with " +
        "`currentVersion`, another failed check its 4xx: the proposal then becomes `conflicted` with the problem " +
        "in `result`, and nothing is written. The proposing token cannot approve (403, admin included). Approving " +
        "again with the same token answers 200; any other decision on a decided or expired proposal is 409.",
      body: { schema: ProposalDecisionSchema, required: false, example: { reason: "photos checked" } },
      answers: {
        200: {
          description: "Approved, with the commit response in `result`.",
          schema: ProposalAnswer,
          example: {
            ...PROPOSAL_EXAMPLE,
            status: "approved",
            decidedAt: T,
            decidedBy: DECIDED_BY,
            reason: "photos checked",
            result: COMMIT_EXAMPLE,
          },
        },
      },
      problems: [400, 404, 409, 413, 422],
    }),
    async (c) => {
      const { proposal, deprecatedAt } = await deps.proposals.approve(
        c.get("identity"),
        c.req.param("id"),
        await reason(c, deps),
        (deps.tracing ?? NO_TRACING).requestTraceparent(c.req.raw),
      );
      deprecationHeader(c, deprecatedAt);
      return c.json(proposal);
    },
  );

  app.post(
    "/v1/proposals/:id/reject",
    scopedRoute(deps, {
      scopes: "approve",
      tag: TAG,
      summary: "Reject a proposal",
      body: {
        schema: ProposalDecisionSchema,
        required: false,
        example: { reason: "outside the return window" },
      },
      answers: {
        200: {
          description: "Rejected.",
          schema: ProposalAnswer,
          example: {
            ...PROPOSAL_EXAMPLE,
            status: "rejected",
            decidedAt: T,
            decidedBy: DECIDED_BY,
            reason: "outside the return window",
          },
        },
      },
      problems: [400, 404, 409, 413, 422],
    }),
    async (c) =>
      c.json(await deps.proposals.reject(c.get("identity"), c.req.param("id"), await reason(c, deps))),
  );
}

/** The optional `{"reason"}` body of a decision (an empty body is no reason). */
async function reason(c: Context<AppEnv>, deps: HttpDeps): Promise<string | null> {
  if (!hasBody(c)) return null;
  const body = validate(ProposalDecisionSchema, await readJson(c, deps.config.maxBodyBytes));
  return body.reason ?? null;
}
