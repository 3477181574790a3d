// outboxd extensions for the dashboard (docs/design.md): the last hour per minute and the attempt
// log across deliveries. Read-only, `read` scope.
import { invalidField } from "../../lib/problem.ts";
import { recentAttempts, statsHistory } from "../../ops/history.ts";
import { requireScope } from "../auth.ts";
import type { App, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT } from "../pagination.ts";
import { PageQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";

export function historyRoutes(app: App, deps: HttpDeps): void {
  const read = requireScope(deps, "read");

  app.get("/v1/stats/history", read, async (c) =>
    c.json(await deps.db.driver.read(statsHistory(deps.clock()))),
  );

  app.get("/v1/attempts", read, async (c) => {
    const query = validate(PageQuerySchema, c.req.query());
    if (query.after !== undefined && !/^\d{1,15}$/.test(query.after)) {
      throw invalidField("query:after", "is not a cursor this list returned");
    }
    const after = query.after === undefined ? undefined : Number(query.after);
    return c.json(await deps.db.driver.read(recentAttempts(query.limit ?? DEFAULT_LIMIT, after)));
  });
}
