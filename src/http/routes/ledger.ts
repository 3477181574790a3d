// The ledger's routes (DESIGN §13): a record's history and the hash chain.
import { chainLinks, ledgerHead, recordHistory } from "../../ledger/history.ts";
import { invalidField, problems } from "../../lib/problem.ts";
import { requireScope } from "../auth.ts";
import type { App, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { Name, PageQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";

/** A numeric cursor this route handed out, or a 422 naming the query parameter. */
function cursor(after: string | undefined, min: number): number | undefined {
  if (after === undefined) return undefined;
  if (!/^\d{1,15}$/.test(after) || Number(after) < min) {
    throw invalidField("query:after", "is not a cursor this list returned");
  }
  return Number(after);
}

export function ledgerRoutes(app: App, deps: HttpDeps): void {
  const read = requireScope(deps, "read");

  app.get("/v1/records/:collection/:id/history", requireScope(deps, ["commit", "read"]), async (c) => {
    const collection = validate(Name, c.req.param("collection"), "path:collection");
    const id = validate(Name, c.req.param("id"), "path:id");
    const query = validate(PageQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    const before = cursor(query.after, 1);
    const versions = await deps.db.driver.read(recordHistory(collection, id, limit, before));
    if (versions.length === 0 && before === undefined) {
      throw problems.notFound(`${collection}/${id} never existed`, { currentVersion: null });
    }
    return c.json(page(versions, limit, (v) => v.version));
  });

  app.get("/v1/ledger", read, async (c) => c.json(await deps.db.driver.read(ledgerHead())));

  app.get("/v1/ledger/commits", read, async (c) => {
    const query = validate(PageQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    const links = await deps.db.driver.read(chainLinks(limit, cursor(query.after, 0)));
    return c.json(page(links, limit, (l) => l.seq));
  });
}
