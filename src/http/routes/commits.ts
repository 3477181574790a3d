// POST /v1/commits and the records routes (DESIGN §3 Commits and records).
import type { Context } from "hono";
import type { Committer } from "../../commit/commit-op.ts";
import { getRecord, listRecords } from "../../commit/records.ts";
import type { CommitAnswer } from "../../commit/service.ts";
import { problems } from "../../lib/problem.ts";
import { iso } from "../../lib/time.ts";
import { NO_TRACING } from "../../ops/tracing.ts";
import { requireScope } from "../auth.ts";
import { readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { CommitSchema, Name, PageQuerySchema, PutRecordSchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { deprecationHeader } from "./event-types.ts";

/** Who may read records (DESIGN Part II scopes): readers, writers, proposers and approvers. */
export const RECORD_READERS = ["read", "commit", "propose", "approve"] as const;

export function commitRoutes(app: App, deps: HttpDeps): void {
  app.post("/v1/commits", requireScope(deps, "commit"), async (c) => {
    const raw = await readJson(c, deps.config.maxBodyBytes);
    const body = validate(CommitSchema, raw);
    const outcome = await deps.commits.commit({
      by: committer(c),
      body,
      rawBody: raw,
      idempotencyKey: c.req.header("idempotency-key"),
      traceparent: (deps.tracing ?? NO_TRACING).requestTraceparent(c.req.raw),
    });
    return respond(c, outcome, 201, outcome.result);
  });

  app.put("/v1/records/:collection/:id", requireScope(deps, "commit"), async (c) => {
    const { collection, id } = recordKey(c);
    const raw = await readJson(c, deps.config.maxBodyBytes);
    const body = validate(PutRecordSchema, raw);
    const outcome = await deps.commits.commit({
      by: committer(c),
      body: {
        records: [{ collection, id, expectedVersion: expectedVersion(c), data: body.data, delete: null }],
        events: body.events ?? null,
      },
      rawBody: {
        collection,
        id,
        ifMatch: c.req.header("if-match") ?? null,
        ifNoneMatch: c.req.header("if-none-match") ?? null,
        body: raw,
      },
      idempotencyKey: c.req.header("idempotency-key"),
      traceparent: (deps.tracing ?? NO_TRACING).requestTraceparent(c.req.raw),
      conflictStatus: 412,
    });
    const record = outcome.result.records[0];
    const written = outcome.written[0];
    if (!record || !written) throw new Error("a record commit returned no record");
    c.header("ETag", `"${record.version}"`);
    return respond(c, outcome, written.created ? 201 : 200, {
      collection,
      id,
      version: record.version,
      data: body.data,
      createdAt: iso(written.createdAt),
      updatedAt: iso(written.updatedAt),
      commitId: outcome.result.commitId,
      events: outcome.result.events,
    });
  });

  app.get("/v1/records/:collection/:id", requireScope(deps, RECORD_READERS), async (c) => {
    const { collection, id } = recordKey(c);
    const found = await deps.db.driver.read(getRecord(collection, id));
    if (!found) throw problems.notFound(`${collection}/${id} does not exist`, { currentVersion: null });
    if (found.deleted)
      throw problems.notFound(`${collection}/${id} was deleted`, { currentVersion: found.version });
    c.header("ETag", `"${found.record.version}"`);
    return c.json(found.record);
  });

  app.get("/v1/records/:collection", requireScope(deps, RECORD_READERS), async (c) => {
    const collection = validate(Name, c.req.param("collection"), "path:collection");
    const query = validate(PageQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    const records = await deps.db.driver.read(listRecords(collection, limit, query.after));
    return c.json(page(records, limit, (r) => r.id));
  });
}

function recordKey(c: Context<AppEnv>): { collection: string; id: string } {
  return {
    collection: validate(Name, c.req.param("collection"), "path:collection"),
    id: validate(Name, c.req.param("id"), "path:id"),
  };
}

/** If-Match: "<version>" must match; If-None-Match: * requires that it never existed. */
function expectedVersion(c: Context<AppEnv>): number | null {
  const ifMatch = c.req.header("if-match");
  const ifNoneMatch = c.req.header("if-none-match");
  if (ifMatch !== undefined && ifNoneMatch !== undefined) {
    throw problems.invalid([
      { pointer: "header:If-Match", detail: "send If-Match or If-None-Match, not both" },
    ]);
  }
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() !== "*")
      throw problems.invalid([{ pointer: "header:If-None-Match", detail: 'only "*" is supported' }]);
    return 0;
  }
  if (ifMatch === undefined) return null;
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(ifMatch);
  if (!match)
    throw problems.invalid([{ pointer: "header:If-Match", detail: 'must be a version in quotes, e.g. "3"' }]);
  const version = Number(match[1]);
  if (version < 1) throw problems.invalid([{ pointer: "header:If-Match", detail: "versions start at 1" }]);
  return version;
}

function committer(c: Context<AppEnv>): Committer {
  const identity = c.get("identity");
  return { tokenId: identity.id, tokenName: identity.name };
}

function respond(c: Context<AppEnv>, outcome: CommitAnswer, status: 200 | 201, body: unknown): Response {
  if (outcome.replayed) c.header("Idempotent-Replayed", "true");
  deprecationHeader(c, outcome.deprecatedAt);
  return c.json(body, status);
}
