// API tokens (DESIGN §3 Tokens): the token itself is shown once, on creation.
import { createToken, listTokens, revokeToken } from "../../auth/tokens.ts";
import { problems } from "../../lib/problem.ts";
import { requireScope } from "../auth.ts";
import { readJson } from "../body.ts";
import type { App, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { PageQuerySchema, TokenCreateSchema } from "../schemas.ts";
import { validate } from "../validation.ts";

export function tokenRoutes(app: App, deps: HttpDeps): void {
  const admin = requireScope(deps, "admin");

  app.post("/v1/tokens", admin, async (c) => {
    const body = validate(TokenCreateSchema, await readJson(c, deps.config.maxBodyBytes));
    const { token, view } = await deps.db.writer.write(
      createToken(body.name, [...new Set(body.scopes)], deps.clock()),
    );
    return c.json(
      { id: view.id, name: view.name, scopes: view.scopes, createdAt: view.createdAt, token },
      201,
    );
  });

  app.get("/v1/tokens", requireScope(deps, "read"), async (c) => {
    const query = validate(PageQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    return c.json(page(await deps.db.driver.read(listTokens(limit, query.after)), limit, (t) => t.id));
  });

  app.delete("/v1/tokens/:id", admin, async (c) => {
    const id = c.req.param("id");
    if (!(await deps.db.writer.write(revokeToken(id, deps.clock())))) {
      throw problems.notFound(`token ${id} does not exist or is already revoked`);
    }
    return c.json({ id, revoked: true });
  });
}
