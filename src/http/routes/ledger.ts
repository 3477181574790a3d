// The ledger's routes (DESIGN §13): a record's history and the hash chain.
import { chainLinks, ledgerHead, recordHistory } from "../../ledger/history.ts";
import { invalidField, problems } from "../../lib/problem.ts";
import type { App, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { ChainLinkAnswer, LedgerAnswer, pageOf, RecordVersionAnswer } from "../responses.ts";
import { Name, PageQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { EVENT_ID, T } from "./examples.ts";

const TAG = "Ledger";
const HASH = "3b7e0c5f1d2a4e6b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d";
const PREVIOUS = "9f2c4e6a8b0d1f3e5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f";
const COMMIT_ID = "cmt_01JDZ8V7M2Q4";

/** A numeric cursor this route handed out, or a 422 naming the query parameter. */
function cursor(after: string | undefined, min: number): number | undefined {
  if (after === undefined) return undefined;
  if (!/^\d{1,15}$/.test(after) || Number(after) < min) {
    throw invalidField("query:after", "is not a cursor this list returned");
  }
  return Number(after);
}

export function ledgerRoutes(app: App, deps: HttpDeps): void {
  app.get(
    "/v1/records/:collection/:id/history",
    scopedRoute(deps, {
      scopes: ["read", "commit"],
      tag: TAG,
      summary: "Every version of a record, newest first",
      description:
        "Each version with the commit that wrote it, who committed it (`committedBy`), when, and the events " +
        "that commit inserted. `data` is null for a delete, and for an erased version (`erased: true`, an " +
        "outboxd extension, as is `proposalId`). Versions taken over by the ledger migration have " +
        "`commitId: null` and `committedBy: null`. A record that never existed is 404. " +
        "`limit` is 1-500 (default 100); pass `next` as `after` for the next page.",
      params: { collection: Name, id: Name },
      query: PageQuerySchema,
      answers: {
        200: {
          description: "A page of versions.",
          schema: pageOf(RecordVersionAnswer),
          example: {
            data: [
              {
                version: 2,
                data: { status: "approved" },
                deleted: false,
                erased: false,
                commitId: COMMIT_ID,
                committedBy: { tokenId: "tok_01JDZ8A1", tokenName: "returns-service" },
                proposalId: null,
                at: T,
                events: [{ id: EVENT_ID, type: "return.approved", aggregate: "returns/r-123", sequence: 2 }],
              },
            ],
            next: null,
          },
        },
      },
      problems: [404, 422],
    }),
    async (c) => {
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
    },
  );

  app.get(
    "/v1/ledger",
    scopedRoute(deps, {
      scopes: "read",
      tag: TAG,
      summary: "The hash chain's length and head",
      description:
        "`commits` counts the chain's entries (seq 0 to the head). Anchor `head.hash` somewhere else now " +
        "and then and check it with `outboxd verify --anchor SEQ:HASH` (docs/ledger.md). `head` is null " +
        "before the first commit.",
      answers: {
        200: {
          description: "The head of the chain.",
          schema: LedgerAnswer,
          example: { commits: 42, head: { seq: 41, commitId: COMMIT_ID, hash: HASH, at: T } },
        },
      },
    }),
    async (c) => c.json(await deps.db.driver.read(ledgerHead())),
  );

  app.get(
    "/v1/ledger/commits",
    scopedRoute(deps, {
      scopes: "read",
      tag: TAG,
      summary: "The hash chain, oldest first",
      description:
        "Ascending by `seq`. `hash` = sha256(previousHash + JCS(content)) as DESIGN §13 defines; the first " +
        "commit's previousHash is 64 zeros. `limit` is 1-500 (default 100); pass `next` as `after` for the next page.",
      query: PageQuerySchema,
      answers: {
        200: {
          description: "A page of chain entries.",
          schema: pageOf(ChainLinkAnswer),
          example: {
            data: [{ seq: 41, commitId: COMMIT_ID, hash: HASH, previousHash: PREVIOUS, at: T }],
            next: null,
          },
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(PageQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      const links = await deps.db.driver.read(chainLinks(limit, cursor(query.after, 0)));
      return c.json(page(links, limit, (l) => l.seq));
    },
  );
}
