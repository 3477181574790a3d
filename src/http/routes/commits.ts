// POST /v1/commits and the records routes (DESIGN §3 Commits and records).
import type { Context } from "hono";
import type { Committer } from "../../commit/commit-op.ts";
import { getRecord, listRecords } from "../../commit/records.ts";
import type { CommitAnswer } from "../../commit/service.ts";
import { problems } from "../../lib/problem.ts";
import { iso } from "../../lib/time.ts";
import { NO_TRACING } from "../../ops/tracing.ts";
import { readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { CommitResponse, pageOf, RecordAnswer, RecordWrittenAnswer } from "../responses.ts";
import { CommitSchema, Name, PageQuerySchema, PutRecordSchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { deprecationHeader } from "./event-types.ts";
import { COMMIT_EXAMPLE, RECORD_EXAMPLE } from "./examples.ts";

/** Who may read records (DESIGN §3 scopes): readers, writers, proposers and approvers. */
export const RECORD_READERS = ["read", "commit", "propose", "approve"] as const;

const TAG = "Commits and records";
const IDEMPOTENCY_KEY = { "Idempotency-Key": "Up to 255 characters, scoped to the token." };

export function commitRoutes(app: App, deps: HttpDeps): void {
  app.post(
    "/v1/commits",
    scopedRoute(deps, {
      scopes: "commit",
      tag: TAG,
      summary: "Commit record writes and events atomically",
      description:
        "Writes every record and stores every event in one transaction; each event fans out to the " +
        "endpoints whose patterns match its type (or to `endpoints`). `expectedVersion`: omitted = " +
        "unconditional, `0` = must never have existed, `n` = must be at version n. An event's `aggregate` " +
        "defaults to the only record's `<collection>/<id>`. `deliverBy` or `deliverWithin`, not both. " +
        "A retry with the same `Idempotency-Key` and body gets the first response again " +
        "(`Idempotent-Replayed: true`).",
      headers: IDEMPOTENCY_KEY,
      body: {
        schema: CommitSchema,
        example: {
          records: [
            { collection: "returns", id: "r-123", expectedVersion: 3, data: { status: "approved" } },
            { collection: "returns", id: "r-124", expectedVersion: 1, delete: true },
          ],
          events: [
            {
              type: "return.approved",
              aggregate: "returns/r-123",
              payload: { returnId: "r-123", approvedBy: "u-9" },
              deliverWithin: "24h",
            },
          ],
        },
      },
      answers: {
        201: {
          description: "Committed: the records' new versions and the events with their deliveries.",
          schema: CommitResponse,
          example: COMMIT_EXAMPLE,
        },
      },
      problems: [400, 409, 413, 422],
    }),
    async (c) => {
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
    },
  );

  app.put(
    "/v1/records/:collection/:id",
    scopedRoute(deps, {
      scopes: "commit",
      tag: TAG,
      summary: "Write one record (and its events)",
      description:
        "Events default to this record's aggregate. `If-Match` must name the current version (else 412); " +
        "`If-None-Match: *` requires that the record never existed; neither header = unconditional.",
      params: { collection: Name, id: Name },
      headers: {
        "If-Match": 'The current version in quotes, e.g. "3".',
        "If-None-Match": "`*`: the record must never have existed.",
        ...IDEMPOTENCY_KEY,
      },
      body: {
        schema: PutRecordSchema,
        example: { data: { status: "approved" }, events: [{ type: "return.approved", payload: {} }] },
      },
      answers: {
        200: {
          description: "Updated; `ETag` is the new version.",
          schema: RecordWrittenAnswer,
          headers: { ETag: 'The record\'s version in quotes, e.g. "4".' },
          example: { ...RECORD_EXAMPLE, commitId: COMMIT_EXAMPLE.commitId, events: COMMIT_EXAMPLE.events },
        },
        201: {
          description: "Created; `ETag` is the new version.",
          schema: RecordWrittenAnswer,
          headers: { ETag: 'The record\'s version in quotes, e.g. "1".' },
          example: { ...RECORD_EXAMPLE, version: 1, commitId: COMMIT_EXAMPLE.commitId, events: [] },
        },
      },
      problems: [400, 409, 412, 413, 422],
    }),
    async (c) => {
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
    },
  );

  app.get(
    "/v1/records/:collection/:id",
    scopedRoute(deps, {
      scopes: RECORD_READERS,
      tag: TAG,
      summary: "Read one record",
      description: "A deleted record is 404 with `currentVersion`.",
      params: { collection: Name, id: Name },
      answers: {
        200: {
          description: "The record; `ETag` is its version.",
          schema: RecordAnswer,
          headers: { ETag: "The record's version in quotes." },
          example: RECORD_EXAMPLE,
        },
      },
      problems: [404, 422],
    }),
    async (c) => {
      const { collection, id } = recordKey(c);
      const found = await deps.db.driver.read(getRecord(collection, id));
      if (!found) throw problems.notFound(`${collection}/${id} does not exist`, { currentVersion: null });
      if (found.deleted)
        throw problems.notFound(`${collection}/${id} was deleted`, { currentVersion: found.version });
      c.header("ETag", `"${found.record.version}"`);
      return c.json(found.record);
    },
  );

  app.get(
    "/v1/records/:collection",
    scopedRoute(deps, {
      scopes: RECORD_READERS,
      tag: TAG,
      summary: "List the records of a collection",
      description: "Ordered by id. `limit` is 1-500 (default 100); pass `next` as `after` for the next page.",
      params: { collection: Name },
      query: PageQuerySchema,
      answers: {
        200: {
          description: "A page of records.",
          schema: pageOf(RecordAnswer),
          example: { data: [RECORD_EXAMPLE], next: null },
        },
      },
      problems: [422],
    }),
    async (c) => {
      const collection = validate(Name, c.req.param("collection"), "path:collection");
      const query = validate(PageQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      const records = await deps.db.driver.read(listRecords(collection, limit, query.after));
      return c.json(page(records, limit, (r) => r.id));
    },
  );
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
