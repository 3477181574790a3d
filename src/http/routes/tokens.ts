// API tokens (DESIGN §3 Tokens): the token itself is shown once, on creation.
import { listTokens, SCOPES } from "../../auth/tokens.ts";
import { createTokenWrite, revokeTokenWrite } from "../../auth/writes.ts";
import { problems } from "../../lib/problem.ts";
import { readJson } from "../body.ts";
import type { App, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { pageOf, TokenAnswer, TokenCreatedAnswer, TokenRevokedAnswer, WhoAmIAnswer } from "../responses.ts";
import { PageQuerySchema, TokenCreateSchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { PAGED, pageExample, T } from "./examples.ts";

const TOKEN_ID = "tok_01JDZ8V7M2Q4";

export function tokenRoutes(app: App, deps: HttpDeps): void {
  const tag = "Tokens";

  app.post(
    "/v1/tokens",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Create an API token",
      description: "The answer is the only time the token is shown.",
      body: { schema: TokenCreateSchema, example: { name: "returns-service", scopes: ["commit"] } },
      answers: {
        201: {
          description: "Created.",
          schema: TokenCreatedAnswer,
          example: {
            id: TOKEN_ID,
            name: "returns-service",
            scopes: ["commit"],
            createdAt: T,
            token: "otk_…",
          },
        },
      },
      problems: [400, 413, 422],
    }),
    async (c) => {
      const body = validate(TokenCreateSchema, await readJson(c, deps.config.maxBodyBytes));
      const { token, view } = await deps.db.write(
        createTokenWrite(body.name, [...new Set(body.scopes)], deps.clock()),
      );
      return c.json(
        { id: view.id, name: view.name, scopes: view.scopes, createdAt: view.createdAt, token },
        201,
      );
    },
  );

  app.get(
    "/v1/tokens",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "List tokens (never their secrets)",
      description: PAGED,
      query: PageQuerySchema,
      answers: {
        200: {
          description: "A page of tokens.",
          schema: pageOf(TokenAnswer),
          example: pageExample({
            id: TOKEN_ID,
            name: "returns-service",
            scopes: ["commit"],
            createdAt: T,
            lastUsedAt: T,
            revokedAt: null,
          }),
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(PageQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      return c.json(page(await deps.db.driver.read(listTokens(limit, query.after)), limit, (t) => t.id));
    },
  );

  app.get(
    "/v1/whoami",
    scopedRoute(deps, {
      scopes: SCOPES.filter((s) => s !== "admin"),
      tag,
      summary: "The calling token: its id, name and scopes",
      description:
        "outboxd extension: what `outboxd mcp` asks at start, to list the tools the token allows. Any token.",
      answers: {
        200: {
          description: "The token (never its secret).",
          schema: WhoAmIAnswer,
          example: { id: TOKEN_ID, name: "returns-agent", scopes: ["propose", "read"] },
        },
      },
      extension: true,
    }),
    (c) => {
      const { id, name, scopes } = c.get("identity");
      return c.json({ id, name, scopes });
    },
  );

  app.delete(
    "/v1/tokens/:id",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Revoke a token",
      answers: {
        200: {
          description: "Revoked.",
          schema: TokenRevokedAnswer,
          example: { id: TOKEN_ID, revoked: true },
        },
      },
      problems: [404],
    }),
    async (c) => {
      const id = c.req.param("id");
      const identity = c.get("identity");
      const by = { tokenId: identity.id, tokenName: identity.name };
      if (!(await deps.db.write(revokeTokenWrite(id, deps.clock(), by)))) {
        throw problems.notFound(`token ${id} does not exist or is already revoked`);
      }
      return c.json({ id, revoked: true });
    },
  );
}
