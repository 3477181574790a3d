// GET /openapi.json and GET /docs (DESIGN §3): the one table of every route, from which the
// OpenAPI 3.1 document is built. Request bodies and query parameters are converted from the
// very valibot schemas that validate them (src/http/schemas.ts), so the document cannot drift
// from what the server accepts; test/http/openapi.test.ts checks the table against the routes
// the app registers.
import { toJsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import type * as v from "valibot";
import pkg from "../../package.json" with { type: "json" };
import type { Scope } from "../auth/tokens.ts";
import type { App } from "./context.ts";
import { docsPage } from "./docs-page.ts";
import {
  CommitSchema,
  DeliveriesQuerySchema,
  Duration,
  EndpointCreateSchema,
  EndpointPatchSchema,
  EventSchema,
  EventsQuerySchema,
  EventTypePutSchema,
  Name,
  PageQuerySchema,
  ProposalCreateSchema,
  ProposalDecisionSchema,
  ProposalsQuerySchema,
  PutRecordSchema,
  RecordWriteSchema,
  ReplayManySchema,
  ReplayOneSchema,
  Timestamp,
  TokenCreateSchema,
} from "./schemas.ts";

type Json = Record<string, unknown>;
export type Method = "get" | "post" | "put" | "patch" | "delete";
/** Who may call a route: no token, or a bearer token holding one of these scopes (admin holds all). */
export type Access = "public" | readonly Scope[];

/** The request bodies, by component name; every one is a schema that validates that body. */
const REQUEST_SCHEMAS = {
  CommitRequest: CommitSchema,
  PutRecordRequest: PutRecordSchema,
  RecordWrite: RecordWriteSchema,
  Event: EventSchema,
  EndpointCreateRequest: EndpointCreateSchema,
  EndpointPatchRequest: EndpointPatchSchema,
  TokenCreateRequest: TokenCreateSchema,
  EventTypePutRequest: EventTypePutSchema,
  ProposalCreateRequest: ProposalCreateSchema,
  ProposalDecisionRequest: ProposalDecisionSchema,
  ReplayRequest: ReplayOneSchema,
  ReplayManyRequest: ReplayManySchema,
  Timestamp,
  Duration,
} satisfies Record<string, v.GenericSchema>;
export type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;

interface Header {
  name: string;
  description: string;
  required?: boolean;
}

export interface RouteDoc {
  method: Method;
  /** OpenAPI form: `/v1/records/{collection}/{id}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access | "metrics";
  /** Path parameters other than plain strings (`{id}` defaults to a string). */
  pathSchemas?: Record<string, v.GenericSchema>;
  query?: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>;
  headers?: Header[];
  body?: { schema: RequestSchemaName; required: boolean; example?: unknown };
  ok: {
    status: number;
    description: string;
    contentType?: string;
    example?: unknown;
    headers?: Header[];
    /** Another success status, e.g. 201 when PUT creates. */
    also?: { status: number; description: string };
  };
  /** Problem statuses this route can answer (401/403 are added for every route that needs a token). */
  problems?: number[];
  /** An additive route that DESIGN §3 does not name (documented in docs/design.md). */
  extension?: boolean;
  /** Defaults to the method and path in camelCase, e.g. `postEndpointsIdRotateSecret`. */
  operationId?: string;
}

const T = "2026-11-29T10:00:00.000Z";

/** A record as the records routes answer it. */
const RECORD_EXAMPLE = {
  collection: "returns",
  id: "r-123",
  version: 4,
  data: { status: "approved" },
  createdAt: T,
  updatedAt: T,
};
const EVENT_TYPE_PUT_EXAMPLE = {
  description: "A refund was issued for an approved return.",
  schema: {
    type: "object",
    properties: { returnId: { type: "string" }, amount: { type: "integer", minimum: 0 } },
    required: ["returnId", "amount"],
  },
  deprecated: false,
};
const EVENT_TYPE_EXAMPLE = {
  type: "refund.issued",
  ...EVENT_TYPE_PUT_EXAMPLE,
  deprecatedAt: null,
  createdAt: T,
  updatedAt: T,
};
const PROPOSAL_CREATE_EXAMPLE = {
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
  summary: PROPOSAL_CREATE_EXAMPLE.summary,
  commit: PROPOSAL_CREATE_EXAMPLE.commit,
  proposedBy: { tokenId: "tok_01JDZ8V7M2Q4", tokenName: "returns-agent" },
  createdAt: T,
  expiresAt: "2026-11-30T10:00:00.000Z",
  decidedAt: null as string | null,
  decidedBy: null as { tokenId: string; tokenName: string } | null,
  reason: null as string | null,
  result: null as unknown,
};
const PROPOSAL_APPROVED_EXAMPLE = {
  ...PROPOSAL_EXAMPLE,
  status: "approved",
  decidedAt: T,
  decidedBy: { tokenId: "tok_01JDZ8W1A9B2", tokenName: "alice" },
  reason: "photos checked",
  result: {
    commitId: "cmt_01JDZ8V7M2Q4",
    records: [{ collection: "returns", id: "r-123", version: 4, deleted: false }],
    events: [
      {
        id: "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
        type: "return.approved",
        aggregate: "returns/r-123",
        sequence: 7,
        deliverBy: "2026-11-30T10:00:00.000Z",
        deliveries: [{ id: "dlv_01JDZ8V7M2Q4", endpointId: "ep_01JDZ8V7M2Q4" }],
      },
    ],
  },
};
const ENDPOINT_EXAMPLE = {
  id: "ep_01JDZ8V7M2Q4",
  url: "https://returns.example.com/hooks/outboxd",
  eventTypes: ["return.*"],
  description: "returns service",
  disabled: false,
  disabledReason: null,
  createdAt: T,
  lastSuccessAt: T,
  lastFailureAt: null,
  pending: 0,
  dead: 0,
};
const DELIVERY_EXAMPLE = {
  id: "dlv_01JDZ8V7M2Q4",
  endpointId: "ep_01JDZ8V7M2Q4",
  status: "dead",
  attemptCount: 12,
  nextAttemptAt: null,
  lastStatusCode: 500,
  lastError: "HTTP 500",
  deliveredAt: null,
  deadReason: "deadline_exceeded",
  eventId: "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
  type: "return.approved",
  aggregate: "returns/r-123",
  sequence: 7,
};
const ATTEMPT_EXAMPLE = {
  at: T,
  durationMs: 42,
  statusCode: 200,
  error: null,
  responsePrefix: '{"result":"applied"}',
};
const list = (item: unknown) => ({ data: [item], next: null });
const STATS_COUNTS = {
  pending: 3,
  inFlight: 1,
  due: 1,
  oldestPendingAgeSeconds: 12.5,
  dead: 1,
  deadlineExceededTotal: 1,
  deliveredLastHour: 420,
};

const TOKEN: Header = { name: "Idempotency-Key", description: "Up to 255 characters, scoped to the token." };
const PAGED = "Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next.";

/** Every route of DESIGN §3, plus the marked outboxd extensions. */
export const ROUTES: readonly RouteDoc[] = [
  // Commits and records
  {
    method: "post",
    path: "/v1/commits",
    tag: "Commits and records",
    summary: "Commit record writes and events atomically",
    description:
      "Writes every record and stores every event in one transaction; each event fans out to the " +
      "endpoints whose patterns match its type (or to `endpoints`). `expectedVersion`: omitted = " +
      "unconditional, `0` = must never have existed, `n` = must be at version n. An event's `aggregate` " +
      "defaults to the only record's `<collection>/<id>`. `deliverBy` or `deliverWithin`, not both. " +
      "A retry with the same `Idempotency-Key` and body gets the first response again " +
      "(`Idempotent-Replayed: true`).",
    access: ["commit"],
    headers: [TOKEN],
    body: {
      schema: "CommitRequest",
      required: true,
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
    ok: {
      status: 201,
      description: "Committed: the records' new versions and the events with their deliveries.",
      example: {
        commitId: "cmt_01JDZ8V7M2Q4",
        records: [{ collection: "returns", id: "r-123", version: 4, deleted: false }],
        events: [
          {
            id: "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
            type: "return.approved",
            aggregate: "returns/r-123",
            sequence: 7,
            deliverBy: T,
            deliveries: [{ id: "dlv_01JDZ8V7M2Q4", endpointId: "ep_01JDZ8V7M2Q4" }],
          },
        ],
      },
    },
    problems: [400, 409, 413, 422],
  },
  {
    method: "put",
    path: "/v1/records/{collection}/{id}",
    tag: "Commits and records",
    summary: "Write one record (and its events)",
    description:
      "Events default to this record's aggregate. `If-Match` must name the current version (else 412); " +
      "`If-None-Match: *` requires that the record never existed; neither header = unconditional.",
    access: ["commit"],
    pathSchemas: { collection: Name, id: Name },
    headers: [
      { name: "If-Match", description: 'The current version in quotes, e.g. "3".' },
      { name: "If-None-Match", description: "`*`: the record must never have existed." },
      TOKEN,
    ],
    body: {
      schema: "PutRecordRequest",
      required: true,
      example: { data: { status: "approved" }, events: [{ type: "return.approved", payload: {} }] },
    },
    ok: {
      status: 200,
      description: "Updated; `ETag` is the new version.",
      also: { status: 201, description: "Created; `ETag` is the new version." },
      headers: [{ name: "ETag", description: 'The record\'s version in quotes, e.g. "4".' }],
      example: { ...RECORD_EXAMPLE, commitId: "cmt_01JDZ8V7M2Q4", events: [] },
    },
    problems: [400, 409, 412, 413, 422],
  },
  {
    method: "get",
    path: "/v1/records/{collection}/{id}",
    tag: "Commits and records",
    summary: "Read one record",
    description: "A deleted record is 404 with `currentVersion`.",
    access: ["read", "commit", "propose", "approve"],
    pathSchemas: { collection: Name, id: Name },
    ok: {
      status: 200,
      description: "The record; `ETag` is its version.",
      headers: [{ name: "ETag", description: "The record's version in quotes." }],
      example: RECORD_EXAMPLE,
    },
    problems: [404, 422],
  },
  {
    method: "get",
    path: "/v1/records/{collection}",
    tag: "Commits and records",
    summary: "List the records of a collection",
    description: "Ordered by id. `limit` is 1-500 (default 100); pass `next` as `after` for the next page.",
    access: ["read", "commit", "propose", "approve"],
    pathSchemas: { collection: Name },
    query: PageQuerySchema,
    ok: { status: 200, description: "A page of records." },
    problems: [422],
  },
  // Event types (DESIGN §9)
  {
    method: "put",
    path: "/v1/event-types/{type}",
    tag: "Event types",
    summary: "Register or replace an event type",
    description:
      "Replaces the whole entry (omitted fields reset). `schema` is a JSON Schema (draft 2020-12) for the " +
      "event payload, at most 64 KiB, references only within itself; one that does not compile is 422. " +
      "Commits and proposals with events of this type are validated against it.",
    access: ["admin"],
    body: {
      schema: "EventTypePutRequest",
      required: true,
      example: EVENT_TYPE_PUT_EXAMPLE,
    },
    ok: {
      status: 200,
      description: "Replaced.",
      example: EVENT_TYPE_EXAMPLE,
      also: { status: 201, description: "Registered." },
    },
    problems: [400, 413, 422],
  },
  {
    method: "get",
    path: "/v1/event-types",
    tag: "Event types",
    summary: "List event types",
    description: `Ordered by type. ${PAGED}`,
    access: ["read"],
    query: PageQuerySchema,
    ok: { status: 200, description: "A page of event types.", example: list(EVENT_TYPE_EXAMPLE) },
    problems: [422],
  },
  {
    method: "get",
    path: "/v1/event-types/{type}",
    tag: "Event types",
    summary: "Read an event type",
    access: ["read"],
    ok: { status: 200, description: "The event type.", example: EVENT_TYPE_EXAMPLE },
    problems: [404, 422],
  },
  {
    method: "delete",
    path: "/v1/event-types/{type}",
    tag: "Event types",
    summary: "Remove an event type",
    description: "Its events are no longer checked (and in strict mode no longer accepted).",
    access: ["admin"],
    ok: { status: 204, description: "Removed." },
    problems: [404, 422],
  },
  // Proposals (DESIGN §10)
  {
    method: "post",
    path: "/v1/proposals",
    tag: "Proposals",
    summary: "Propose a commit for a person's approval",
    description:
      "The commit is validated now as a commit would be (event-type schemas included; pointers under " +
      "`/commit`), and every record write must carry `expectedVersion`. Nothing is written until a token with " +
      "`approve` (not this one) approves it. `Idempotency-Key` has its own namespace, apart from commits.",
    access: ["propose"],
    headers: [
      {
        name: "Idempotency-Key",
        description: "1-255 characters; a retry with the same body gets the same proposal.",
      },
    ],
    body: { schema: "ProposalCreateRequest", required: true, example: PROPOSAL_CREATE_EXAMPLE },
    ok: {
      status: 201,
      description: "The pending proposal.",
      example: PROPOSAL_EXAMPLE,
      headers: [
        { name: "Idempotent-Replayed", description: "`true` on a retry answered from the first request." },
      ],
    },
    problems: [400, 409, 413, 422],
  },
  {
    method: "get",
    path: "/v1/proposals",
    tag: "Proposals",
    summary: "List proposals",
    description: `Newest first; items leave out \`commit\`. ${PAGED}`,
    access: ["propose", "approve", "read"],
    query: ProposalsQuerySchema,
    ok: {
      status: 200,
      description: "A page of proposals.",
      example: list((({ commit: _commit, ...item }) => item)(PROPOSAL_EXAMPLE)),
    },
    problems: [422],
  },
  {
    method: "get",
    path: "/v1/proposals/{id}",
    tag: "Proposals",
    summary: "Read a proposal, with each record's current state",
    description:
      "`current` holds each record of the commit as it is now (`version: 0`, `data: null` if it never existed): the diff's left side.",
    access: ["propose", "approve", "read"],
    ok: {
      status: 200,
      description: "The proposal.",
      example: {
        ...PROPOSAL_EXAMPLE,
        current: [
          { collection: "returns", id: "r-123", version: 3, data: { status: "requested" }, deleted: false },
        ],
      },
    },
    problems: [404],
  },
  {
    method: "post",
    path: "/v1/proposals/{id}/approve",
    tag: "Proposals",
    summary: "Approve a proposal: apply its commit",
    description:
      "Validates the commit again and applies it in one transaction, re-checking every `expectedVersion`; " +
      "deadlines and fan-out count from now; the commit is the approver's. A changed record is 409 with " +
      "`currentVersion`, another failed check its 4xx: the proposal then becomes `conflicted` with the problem " +
      "in `result`, and nothing is written. The proposing token cannot approve (403, admin included). Approving " +
      "again with the same token answers 200; any other decision on a decided or expired proposal is 409.",
    access: ["approve"],
    body: { schema: "ProposalDecisionRequest", required: false, example: { reason: "photos checked" } },
    ok: {
      status: 200,
      description: "Approved, with the commit response in `result`.",
      example: PROPOSAL_APPROVED_EXAMPLE,
    },
    problems: [400, 404, 409, 413, 422],
  },
  {
    method: "post",
    path: "/v1/proposals/{id}/reject",
    tag: "Proposals",
    summary: "Reject a proposal",
    access: ["approve"],
    body: {
      schema: "ProposalDecisionRequest",
      required: false,
      example: { reason: "outside the return window" },
    },
    ok: {
      status: 200,
      description: "Rejected.",
      example: {
        ...PROPOSAL_EXAMPLE,
        status: "rejected",
        decidedAt: T,
        decidedBy: PROPOSAL_APPROVED_EXAMPLE.decidedBy,
        reason: "outside the return window",
      },
    },
    problems: [400, 404, 409, 413, 422],
  },
  // Endpoints
  {
    method: "post",
    path: "/v1/endpoints",
    tag: "Endpoints",
    summary: "Create a webhook endpoint",
    description:
      "The URL must be `https` and not internal unless `OUTBOXD_ALLOW_PRIVATE_ENDPOINTS` is set. Event-type " +
      "patterns: an exact type, `prefix.*` or `*`; none = every event. The answer is the only place, " +
      "with rotate and the secret route, where the signing secret appears.",
    access: ["admin"],
    body: {
      schema: "EndpointCreateRequest",
      required: true,
      example: { url: "https://returns.example.com/hooks/outboxd", eventTypes: ["return.*"] },
    },
    ok: {
      status: 201,
      description: "Created, with its signing secret.",
      example: { ...ENDPOINT_EXAMPLE, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
    },
    problems: [400, 413, 422],
  },
  {
    method: "get",
    path: "/v1/endpoints",
    tag: "Endpoints",
    summary: "List endpoints",
    description: PAGED,
    access: ["read"],
    query: PageQuerySchema,
    ok: { status: 200, description: "A page of endpoints (no secrets).", example: list(ENDPOINT_EXAMPLE) },
    problems: [422],
  },
  {
    method: "get",
    path: "/v1/endpoints/{id}",
    tag: "Endpoints",
    summary: "Read an endpoint",
    description: "With its health: `lastSuccessAt`, `lastFailureAt`, `disabled` and why, `pending`, `dead`.",
    access: ["read"],
    ok: { status: 200, description: "The endpoint (no secrets).", example: ENDPOINT_EXAMPLE },
    problems: [404],
  },
  {
    method: "patch",
    path: "/v1/endpoints/{id}",
    tag: "Endpoints",
    summary: "Change an endpoint",
    access: ["admin"],
    body: { schema: "EndpointPatchRequest", required: true, example: { disabled: true } },
    ok: { status: 200, description: "The changed endpoint.", example: ENDPOINT_EXAMPLE },
    problems: [400, 404, 413, 422],
  },
  {
    method: "delete",
    path: "/v1/endpoints/{id}",
    tag: "Endpoints",
    summary: "Delete an endpoint",
    description: "Its pending deliveries go dead with reason `endpoint_deleted`.",
    access: ["admin"],
    ok: {
      status: 200,
      description: "Deleted.",
      example: { id: "ep_01JDZ8V7M2Q4", deleted: true, deadLettered: 0 },
    },
    problems: [404],
  },
  {
    method: "post",
    path: "/v1/endpoints/{id}/enable",
    tag: "Endpoints",
    summary: "Enable a disabled endpoint",
    description: "After a 410 Gone or a PATCH disabled it; its pending deliveries resume.",
    access: ["admin"],
    ok: { status: 200, description: "The endpoint.", example: ENDPOINT_EXAMPLE },
    problems: [404],
  },
  {
    method: "post",
    path: "/v1/endpoints/{id}/test",
    tag: "Endpoints",
    summary: "Send a signed outboxd.ping now",
    access: ["admin"],
    ok: {
      status: 200,
      description: "The receiver's answer.",
      example: { statusCode: 200, error: null, durationMs: 12, responsePrefix: '{"result":"applied"}' },
    },
    problems: [404, 503],
  },
  {
    method: "post",
    path: "/v1/endpoints/{id}/rotate-secret",
    tag: "Endpoints",
    summary: "Rotate the signing secret",
    description:
      "Every unexpired older secret keeps signing until its own expiry (`OUTBOXD_SECRET_GRACE`, 24h).",
    access: ["admin"],
    ok: {
      status: 200,
      description: "The new secret.",
      example: { secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
    },
    problems: [404],
  },
  {
    method: "get",
    path: "/v1/endpoints/{id}/secret",
    tag: "Endpoints",
    summary: "Read the signing secrets",
    access: ["admin"],
    ok: {
      status: 200,
      description: "The current secret and the older ones still signing.",
      example: { secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", previous: [] },
    },
    problems: [404],
  },
  // Events and deliveries
  {
    method: "get",
    path: "/v1/events",
    tag: "Events and deliveries",
    summary: "List events",
    description: `${PAGED} With \`aggregate\`, ordered by sequence.`,
    access: ["read"],
    query: EventsQuerySchema,
    ok: { status: 200, description: "A page of events." },
    problems: [422],
  },
  {
    method: "get",
    path: "/v1/events/{id}",
    tag: "Events and deliveries",
    summary: "Read an event and its deliveries",
    access: ["read"],
    ok: {
      status: 200,
      description: "The event.",
      example: {
        id: "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
        type: "return.approved",
        aggregate: "returns/r-123",
        sequence: 7,
        payload: { returnId: "r-123" },
        occurredAt: T,
        deliverAfter: null,
        deliverBy: T,
        commitId: "cmt_01JDZ8V7M2Q4",
        deliveries: [
          {
            id: "dlv_01JDZ8V7M2Q4",
            endpointId: "ep_01JDZ8V7M2Q4",
            status: "delivered",
            attemptCount: 1,
            nextAttemptAt: null,
            lastStatusCode: 200,
            lastError: null,
            deliveredAt: T,
            deadReason: null,
          },
        ],
      },
    },
    problems: [404],
  },
  {
    method: "get",
    path: "/v1/deliveries",
    tag: "Events and deliveries",
    summary: "List deliveries",
    description: `${PAGED} \`status=dead\` is the dead-letter queue; \`reason\` filters it.`,
    access: ["read"],
    query: DeliveriesQuerySchema,
    ok: { status: 200, description: "A page of deliveries.", example: list(DELIVERY_EXAMPLE) },
    problems: [422],
  },
  {
    method: "get",
    path: "/v1/deliveries/{id}",
    tag: "Events and deliveries",
    summary: "Read a delivery",
    access: ["read"],
    ok: { status: 200, description: "The delivery.", example: DELIVERY_EXAMPLE },
    problems: [404],
  },
  {
    method: "get",
    path: "/v1/deliveries/{id}/attempts",
    tag: "Events and deliveries",
    summary: "The attempt log of a delivery",
    description: "Oldest first.",
    access: ["read"],
    ok: { status: 200, description: "Every attempt kept.", example: [ATTEMPT_EXAMPLE] },
    problems: [404],
  },
  {
    method: "post",
    path: "/v1/deliveries/{id}/replay",
    tag: "Events and deliveries",
    summary: "Replay a dead delivery",
    description:
      "Back to `pending` with its attempts reset and a new deadline (`deliverWithin`, default as at commit). " +
      "The body is optional. 409 unless the delivery is dead.",
    access: ["admin"],
    body: { schema: "ReplayRequest", required: false, example: { deliverWithin: "1h" } },
    ok: {
      status: 200,
      description: "The delivery, pending again.",
      example: {
        ...DELIVERY_EXAMPLE,
        status: "pending",
        attemptCount: 0,
        deadReason: null,
        nextAttemptAt: T,
      },
    },
    problems: [400, 404, 409, 413, 422],
  },
  {
    method: "post",
    path: "/v1/deliveries/replay",
    tag: "Events and deliveries",
    summary: "Replay dead deliveries in bulk",
    access: ["admin"],
    body: {
      schema: "ReplayManyRequest",
      required: true,
      example: { status: "dead", endpoint: "ep_01JDZ8V7M2Q4", reason: "deadline_exceeded" },
    },
    ok: { status: 200, description: "How many went back to pending.", example: { replayed: 3 } },
    problems: [400, 413, 422],
  },
  // Tokens
  {
    method: "post",
    path: "/v1/tokens",
    tag: "Tokens",
    summary: "Create an API token",
    description: "The answer is the only time the token is shown.",
    access: ["admin"],
    body: {
      schema: "TokenCreateRequest",
      required: true,
      example: { name: "returns-service", scopes: ["commit"] },
    },
    ok: {
      status: 201,
      description: "Created.",
      example: {
        id: "tok_01JDZ8V7M2Q4",
        name: "returns-service",
        scopes: ["commit"],
        createdAt: T,
        token: "otk_…",
      },
    },
    problems: [400, 413, 422],
  },
  {
    method: "get",
    path: "/v1/tokens",
    tag: "Tokens",
    summary: "List tokens (never their secrets)",
    description: PAGED,
    access: ["read"],
    query: PageQuerySchema,
    ok: { status: 200, description: "A page of tokens." },
    problems: [422],
  },
  {
    method: "delete",
    path: "/v1/tokens/{id}",
    tag: "Tokens",
    summary: "Revoke a token",
    access: ["admin"],
    ok: { status: 200, description: "Revoked.", example: { id: "tok_01JDZ8V7M2Q4", revoked: true } },
    problems: [404],
  },
  // Operations
  {
    method: "get",
    path: "/v1/stats",
    tag: "Operations",
    summary: "The state of the outbox",
    description:
      "`pending` counts every undelivered, non-dead delivery (in flight included); the oldest pending age " +
      "is measured from the later of the commit and `deliverAfter`.",
    access: ["read"],
    ok: {
      status: 200,
      description: "Totals and the same per endpoint.",
      example: { ...STATS_COUNTS, endpoints: [{ id: "ep_01JDZ8V7M2Q4", ...STATS_COUNTS }] },
    },
  },
  {
    method: "get",
    path: "/v1/stats/history",
    tag: "Operations",
    summary: "Throughput and latency per minute over the last hour",
    description:
      "outboxd extension (dashboard). 60 buckets, oldest first, the current minute last: deliveries marked " +
      "delivered in that minute and their latency from becoming due (the later of commit and `deliverAfter`, " +
      "or the replay) to delivered; the median to two significant digits.",
    access: ["read"],
    extension: true,
    ok: {
      status: 200,
      description: "Per-minute buckets.",
      example: {
        from: "2026-11-29T09:01:00.000Z",
        to: "2026-11-29T10:01:00.000Z",
        bucketSeconds: 60,
        buckets: [{ start: "2026-11-29T10:00:00.000Z", delivered: 7, latencyP50Ms: 12, latencyMaxMs: 340 }],
      },
    },
  },
  {
    method: "get",
    path: "/v1/attempts",
    tag: "Operations",
    summary: "The attempt log across deliveries",
    description: `outboxd extension (dashboard). ${PAGED}`,
    access: ["read"],
    extension: true,
    query: PageQuerySchema,
    ok: {
      status: 200,
      description: "A page of attempts, each with its delivery and event.",
      example: list({
        ...ATTEMPT_EXAMPLE,
        deliveryId: "dlv_01JDZ8V7M2Q4",
        endpointId: "ep_01JDZ8V7M2Q4",
        eventId: "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
        type: "return.approved",
        aggregate: "returns/r-123",
        sequence: 7,
      }),
    },
    problems: [422],
  },
  {
    method: "get",
    path: "/metrics",
    tag: "Operations",
    summary: "Prometheus metrics",
    description: "Needs a `read` token unless `OUTBOXD_METRICS_PUBLIC=1`; also on `OUTBOXD_METRICS_PORT`.",
    access: "metrics",
    ok: { status: 200, description: "Prometheus text format.", contentType: "text/plain" },
  },
  {
    method: "get",
    path: "/healthz",
    tag: "Public",
    summary: "The process is up",
    access: "public",
    ok: { status: 200, description: "Up.", example: { status: "ok" } },
  },
  {
    method: "get",
    path: "/readyz",
    tag: "Public",
    summary: "Ready to serve",
    description: "Database reachable, migrations applied, dispatcher heartbeat fresh. 503 otherwise.",
    access: "public",
    ok: {
      status: 200,
      description: "Ready (503 with the same shape when not).",
      example: { status: "ready", checks: { database: "ok", migrations: "ok", dispatcher: "ok" } },
    },
  },
  {
    method: "get",
    path: "/openapi.json",
    tag: "Public",
    summary: "This document",
    access: "public",
    ok: { status: 200, description: "OpenAPI 3.1." },
  },
  {
    method: "get",
    path: "/docs",
    tag: "Public",
    summary: "This document as a page",
    access: "public",
    ok: { status: 200, description: "HTML.", contentType: "text/html" },
  },
  {
    method: "get",
    path: "/",
    operationId: "getDashboard",
    tag: "Public",
    summary: "The dashboard",
    description: "Its data comes from this API with the token the user enters (kept in sessionStorage only).",
    access: "public",
    ok: { status: 200, description: "HTML.", contentType: "text/html" },
  },
  {
    method: "get",
    path: "/snippet/verify.ts",
    tag: "Public",
    summary: "The receiver snippet, TypeScript",
    description: "For Bun, Deno, Cloudflare Workers and TypeScript builds.",
    access: "public",
    ok: { status: 200, description: "TypeScript source.", contentType: "text/plain" },
  },
  {
    method: "get",
    path: "/snippet/verify.js",
    tag: "Public",
    summary: "The receiver snippet, JavaScript",
    description: "The same code as an ES module with JSDoc types, for Node.js 20 and later.",
    access: "public",
    ok: { status: 200, description: "JavaScript source.", contentType: "text/javascript" },
  },
];

const PROBLEM_RESPONSES: Record<number, { name: string; description: string }> = {
  400: { name: "MalformedJson", description: "Malformed JSON." },
  401: { name: "Unauthorized", description: "Missing or unknown token." },
  403: { name: "Forbidden", description: "The token lacks the scope." },
  404: { name: "NotFound", description: "Not found." },
  409: {
    name: "Conflict",
    description:
      "Conflict: a version conflict (with `currentVersion`), a reused event id, an idempotency key still " +
      "in progress, or a delivery in the wrong state.",
  },
  412: {
    name: "PreconditionFailed",
    description: "`If-Match` / `If-None-Match` failed (with `currentVersion`).",
  },
  413: { name: "BodyTooLarge", description: "The body exceeds `OUTBOXD_MAX_BODY_BYTES`." },
  422: { name: "Invalid", description: "A schema or rule violation; `errors` points into the request." },
  429: {
    name: "RateLimited",
    description:
      "The token sent more than `OUTBOXD_RATE_LIMIT` requests a second; retry after `Retry-After` seconds.",
  },
  503: {
    name: "Unavailable",
    description: "Unavailable (the database was busy past its timeout); retry after `Retry-After`.",
  },
};

const PROBLEM_SCHEMA: Json = {
  type: "object",
  description: "RFC 9457 problem details (`application/problem+json`).",
  required: ["type", "title", "status", "detail"],
  properties: {
    type: { type: "string", format: "uri", examples: ["https://outboxd.dev/problems/validation"] },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    errors: {
      type: "array",
      description: "For validation: one entry per offending field.",
      items: {
        type: "object",
        required: ["pointer", "detail"],
        properties: {
          pointer: { type: "string", description: "JSON Pointer into the request, e.g. `/records/0/id`." },
          detail: { type: "string" },
        },
      },
    },
    currentVersion: {
      type: ["integer", "null"],
      description: "On 409 version conflicts, 412 and 404 of a deleted record.",
    },
  },
};

/** Objects in the OpenAPI document are plain JSON; this converter is the only road from valibot. */
const CONVERSION = {
  target: "draft-2020-12",
  typeMode: "input",
  errorMode: "throw",
  overrideSchema: ({ valibotSchema }) =>
    // The one custom schema in schemas.ts: a JSON object that is not an array.
    valibotSchema.type === "custom" &&
    (valibotSchema as { message?: unknown }).message === "must be a JSON object"
      ? { type: "object" }
      : undefined,
  overrideAction: ({ valibotAction, jsonSchema }) => {
    // A check (e.g. "a real calendar date") refines what JSON Schema already says; nothing to add.
    if (valibotAction.type === "check") return jsonSchema;
    if (valibotAction.type === "regex") {
      const regex = (valibotAction as unknown as { requirement: RegExp }).requirement;
      if (regex.flags === "i") return { ...jsonSchema, pattern: caseInsensitive(regex.source) };
    }
    return undefined;
  },
} satisfies Parameters<typeof toJsonSchema>[1];

/** JSON Schema patterns have no flags: spell `i` out as `[Tt]` (and `a-z` classes as `a-zA-Z`). */
export function caseInsensitive(source: string): string {
  const other = (ch: string) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase());
  const letter = /[A-Za-z]/;
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    if (ch === "\\") {
      const escaped =
        /^\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[pPk][{<][^}>]*[}>]|c[A-Za-z]|.)/su.exec(
          source.slice(i),
        )?.[0];
      out += escaped ?? ch;
      i += (escaped?.length ?? 1) - 1;
    } else if (inClass) {
      const range = /^([A-Za-z])-([A-Za-z])/.exec(source.slice(i));
      if (range?.[1] && range[2] && other(range[1]) !== range[1] && letter.test(range[2])) {
        out += `${range[0]}${other(range[1])}-${other(range[2])}`;
        i += 2;
      } else {
        if (ch === "]") inClass = false;
        out += letter.test(ch) ? ch + other(ch) : ch;
      }
    } else if (ch === "[") {
      inClass = true;
      out += ch;
      if (source[i + 1] === "^") out += source[++i];
    } else if (ch === "(" && source.startsWith("(?<", i) && !/^\(\?<[=!]/.test(source.slice(i))) {
      const group = /^\(\?<[^>]*>/.exec(source.slice(i))?.[0] ?? ch;
      out += group;
      i += group.length - 1;
    } else {
      out += letter.test(ch) ? `[${ch}${other(ch)}]` : ch;
    }
  }
  return out;
}

function withComponentRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withComponentRefs);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$schema") continue;
    out[key] =
      key === "$ref" && typeof value === "string"
        ? value.replace(/^#\/\$defs\//, "#/components/schemas/")
        : withComponentRefs(value);
  }
  return out;
}

function convert(schema: v.GenericSchema): Json {
  return withComponentRefs(toJsonSchema(schema, CONVERSION)) as Json;
}

const QUERY_DESCRIPTIONS: Record<string, string> = {
  limit: "Page size, 1-500 (default 100).",
  after: "The `next` cursor of the previous page.",
  aggregate: "Only this aggregate, ordered by sequence.",
  type: "Only events of this type.",
  status: "pending, delivered or dead.",
  endpoint: "Only deliveries to this endpoint id.",
  reason: "Only dead deliveries with this reason, e.g. deadline_exceeded.",
};

function scopeText(access: RouteDoc["access"]): string {
  if (access === "public") return "Public: no token.";
  if (access === "metrics") return "Scope: `read` (public when `OUTBOXD_METRICS_PUBLIC=1`).";
  return `Scope: ${access.map((s) => `\`${s}\``).join(" or ")} (\`admin\` holds every scope).`;
}

function operation(route: RouteDoc, index: number): Json {
  const parameters: Json[] = [];
  for (const name of route.path.match(/\{[^}]+\}/g) ?? []) {
    const key = name.slice(1, -1);
    const schema = route.pathSchemas?.[key];
    parameters.push({
      name: key,
      in: "path",
      required: true,
      schema: schema ? convert(schema) : { type: "string" },
    });
  }
  if (route.query) {
    const query = convert(route.query) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({
        name,
        in: "query",
        required: query.required?.includes(name) ?? false,
        ...(QUERY_DESCRIPTIONS[name] ? { description: QUERY_DESCRIPTIONS[name] } : {}),
        schema,
      });
    }
  }
  for (const header of route.headers ?? []) {
    parameters.push({
      name: header.name,
      in: "header",
      required: header.required ?? false,
      description: header.description,
      schema: { type: "string" },
    });
  }

  const contentType = route.ok.contentType ?? "application/json";
  const success: Json = {
    description: route.ok.description,
    content: { [contentType]: route.ok.example === undefined ? {} : { example: route.ok.example } },
  };
  if (route.ok.headers) {
    success.headers = Object.fromEntries(
      route.ok.headers.map((h) => [h.name, { description: h.description, schema: { type: "string" } }]),
    );
  }
  const responses: Json = { [route.ok.status]: success };
  if (route.ok.also) responses[route.ok.also.status] = { ...success, description: route.ok.also.description };
  const statuses = new Set(route.problems ?? []);
  if (route.access !== "public") {
    statuses.add(401);
    statuses.add(403);
    statuses.add(429);
  }
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const problem = PROBLEM_RESPONSES[status];
    if (!problem) throw new Error(`openapi: no problem response for ${status}`);
    responses[status] = { $ref: `#/components/responses/${problem.name}` };
  }

  const op: Json = {
    operationId: operationId(route, index),
    tags: [route.tag],
    summary: route.summary,
    description: [scopeText(route.access), route.description].filter(Boolean).join("\n\n"),
    security: route.access === "public" ? [] : [{ bearer: [] }],
    "x-outboxd-scope": route.access === "public" ? [] : route.access === "metrics" ? ["read"] : route.access,
    ...(route.extension ? { "x-outboxd-extension": true } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
  };
  if (route.body) {
    op.requestBody = {
      required: route.body.required,
      content: {
        "application/json": {
          schema: { $ref: `#/components/schemas/${route.body.schema}` },
          ...(route.body.example === undefined ? {} : { example: route.body.example }),
        },
      },
    };
  }
  return op;
}

function operationId(route: RouteDoc, index: number): string {
  if (route.operationId) return route.operationId;
  const words = route.path
    .split("/")
    .filter((part) => part && part !== "v1")
    .map((part) =>
      part.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => c?.toUpperCase() ?? ""),
    );
  const name = [route.method, ...words].map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1)));
  return name.join("") || `op${index}`;
}

/** The OpenAPI 3.1 document of the whole API. */
export function buildOpenApi(): Json {
  const paths: Record<string, Json> = {};
  ROUTES.forEach((route, index) => {
    const item = paths[route.path] ?? {};
    paths[route.path] = item;
    if (item[route.method]) throw new Error(`openapi: ${route.method} ${route.path} is listed twice`);
    item[route.method] = operation(route, index);
  });
  const schemas = withComponentRefs(toJsonSchemaDefs(REQUEST_SCHEMAS, CONVERSION)) as Record<string, Json>;
  if (schemas.Timestamp) schemas.Timestamp = { ...schemas.Timestamp, format: "date-time" };
  return {
    openapi: "3.1.0",
    info: {
      title: "outboxd",
      version: pkg.version,
      summary:
        "A transactional outbox: commit records and events atomically, deliver them as signed webhooks.",
      description:
        "JSON over HTTP. Send `Authorization: Bearer <token>`; scopes: `admin` ⊃ everything, `commit` = write " +
        "commits and records and read records, `read` = every GET except secrets. Timestamps are RFC 3339 in UTC, " +
        "durations match `^\\d+(ms|s|m|h|d)$`, an optional field given as `null` means absent, unknown fields " +
        "are refused (422). Errors are RFC 9457 problem details. Routes marked `x-outboxd-extension` are " +
        "additive outboxd extensions of the contract.",
      license: { name: "MIT", identifier: "MIT" },
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    security: [{ bearer: [] }],
    tags: [...new Set(ROUTES.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An outboxd API token (`otk_…`) or OUTBOXD_ADMIN_TOKEN. Each route names its scope.",
        },
      },
      schemas: { ...schemas, Problem: PROBLEM_SCHEMA },
      responses: Object.fromEntries(
        Object.values(PROBLEM_RESPONSES).map(({ name, description }) => [
          name,
          {
            description,
            content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
          },
        ]),
      ),
    },
  };
}

/**
 * Registers GET /openapi.json and GET /docs, both public. The routes' document is built once;
 * the `webhooks` map (the registered event types, DESIGN §9) is added as it is at each request.
 */
export function openApiRoutes(app: App, webhooks: () => Promise<Json> = async () => ({})): void {
  let document: Json | undefined;
  const get = async () => {
    document ??= buildOpenApi();
    return { ...document, webhooks: await webhooks() };
  };
  app.get("/openapi.json", async (c) => c.json(await get()));
  app.get("/docs", async (c) => c.html(docsPage(await get())));
}
