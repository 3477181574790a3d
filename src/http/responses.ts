// valibot schemas of every JSON answer, described in /openapi.json next to each route
// (src/http/openapi/route.ts) and checked against real answers by test/http/openapi.test.ts.
// Objects are strict, so a field an answer gains without being described here fails that test.
import * as v from "valibot";
import { SCOPES } from "../auth/tokens.ts";
import { CommitSchema } from "../commit/schemas.ts";

const Instant = v.pipe(v.string(), v.isoTimestamp());
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const Int = v.pipe(v.number(), v.integer());
const JsonObject = v.record(v.string(), v.unknown());
const Scopes = v.array(v.picklist(SCOPES));

/** A page of a list (DESIGN §3 Lists): `next` is the cursor of the next page, null at the end. */
export const pageOf = <S extends v.GenericSchema>(item: S) =>
  v.strictObject({ data: v.array(item), next: v.nullable(v.string()) });

/** RFC 9457 problem details; other members may follow a problem's type. */
export const ProblemAnswer = v.pipe(
  v.looseObject({
    type: v.pipe(v.string(), v.url()),
    title: v.string(),
    status: Int,
    detail: v.string(),
    errors: v.optional(
      v.array(
        v.strictObject({
          pointer: v.pipe(v.string(), v.description("JSON Pointer into the request, e.g. `/records/0/id`.")),
          detail: v.string(),
        }),
      ),
    ),
    currentVersion: v.optional(
      v.pipe(
        v.nullable(Int),
        v.description("On 409 version conflicts, 412 and 404 of a deleted record (null: never existed)."),
      ),
    ),
  }),
  v.description("RFC 9457 problem details (`application/problem+json`)."),
);

// Commits and records
export const CommittedEvent = v.strictObject({
  id: v.string(),
  type: v.string(),
  aggregate: v.string(),
  sequence: Int,
  deliverBy: Instant,
  deliveries: v.array(v.strictObject({ id: v.string(), endpointId: v.string() })),
});
export const CommitResponse = v.strictObject({
  commitId: v.string(),
  records: v.array(
    v.strictObject({ collection: v.string(), id: v.string(), version: Int, deleted: v.boolean() }),
  ),
  events: v.array(CommittedEvent),
});
export const RecordAnswer = v.strictObject({
  collection: v.string(),
  id: v.string(),
  version: Int,
  data: JsonObject,
  createdAt: Instant,
  updatedAt: Instant,
});
export const RecordWrittenAnswer = v.strictObject({
  ...RecordAnswer.entries,
  commitId: v.string(),
  events: v.array(CommittedEvent),
});

// Endpoints
export const EndpointAnswer = v.strictObject({
  id: v.string(),
  kind: v.pipe(
    v.picklist(["webhook", "pull"]),
    v.description("`pull`: consumers poll or stream (DESIGN §12)."),
  ),
  url: v.pipe(v.nullable(v.string()), v.description("null for a pull endpoint.")),
  eventTypes: v.array(v.string()),
  description: v.nullable(v.string()),
  disabled: v.boolean(),
  disabledReason: v.pipe(
    v.nullable(v.picklist(["operator", "gone", "failing"])),
    v.description("Why it is disabled: by an operator, a 410 Gone answer, or failing for disableAfter."),
  ),
  disabledDetail: v.nullable(v.string()),
  disabledAt: v.nullable(Instant),
  createdAt: Instant,
  lastSuccessAt: v.nullable(Instant),
  lastFailureAt: v.nullable(Instant),
  rateLimit: v.nullable(v.strictObject({ perSecond: Int, burst: Int })),
  retrySchedule: v.nullable(v.array(v.string())),
  disableAfter: v.string(),
  failingSince: v.pipe(
    v.nullable(Instant),
    v.description("The first failed attempt after the latest 2xx, enable or creation."),
  ),
  filter: v.nullable(
    v.array(
      v.strictObject({
        path: v.string(),
        op: v.picklist(["eq", "ne", "in", "exists", "prefix", "gt", "lt"]),
        value: v.unknown(),
      }),
    ),
  ),
  pending: Count,
  dead: Count,
});
export const EndpointCreatedAnswer = v.strictObject({
  ...EndpointAnswer.entries,
  secret: v.pipe(v.optional(v.string()), v.description("The signing secret; absent for a pull endpoint.")),
});
export const EndpointDeletedAnswer = v.strictObject({
  id: v.string(),
  deleted: v.literal(true),
  deadLettered: Count,
});
export const PingAnswer = v.strictObject({
  statusCode: v.nullable(Int),
  error: v.nullable(v.string()),
  durationMs: v.number(),
  responsePrefix: v.nullable(v.string()),
});

// Pull endpoints (DESIGN §12)
/** The §4 webhook body, as a pulled delivery carries it. */
const WebhookBody = v.strictObject({
  id: v.string(),
  type: v.string(),
  timestamp: Instant,
  aggregate: v.string(),
  sequence: Int,
  previousSequence: v.pipe(
    v.nullable(Int),
    v.description(
      "The same aggregate's latest earlier sequence with a delivery to this endpoint, else null (DESIGN §19).",
    ),
  ),
  data: v.unknown(),
});
export const PulledDelivery = v.strictObject({
  deliveryId: v.string(),
  leaseToken: v.pipe(v.string(), v.description("Send it back with the ack or nack: it fences the answer.")),
  attempt: Count,
  event: WebhookBody,
});
export const PollAnswer = v.strictObject({
  data: v.array(PulledDelivery),
  leaseExpiresAt: v.pipe(
    v.nullable(Instant),
    v.description("When the leases of `data` run out; null when empty."),
  ),
});
export const AckAnswer = v.strictObject({
  acked: Count,
  nacked: Count,
  stale: v.pipe(
    v.array(v.string()),
    v.description(
      "Deliveries whose lease was lost, unknown ids and other endpoints' deliveries: nothing changed.",
    ),
  ),
});
export const SecretAnswer = v.strictObject({ secret: v.string() });
export const SecretsAnswer = v.strictObject({ secret: v.string(), previous: v.array(v.string()) });

// Events and deliveries
const DeliveryStatus = v.picklist(["pending", "delivered", "dead"]);
export const DeliveryInEvent = v.strictObject({
  id: v.string(),
  endpointId: v.string(),
  status: DeliveryStatus,
  attemptCount: Count,
  nextAttemptAt: v.nullable(Instant),
  lastStatusCode: v.nullable(Int),
  lastError: v.nullable(v.string()),
  deliveredAt: v.nullable(Instant),
  deadReason: v.nullable(v.string()),
});
export const DeliveryAnswer = v.strictObject({
  ...DeliveryInEvent.entries,
  eventId: v.string(),
  type: v.string(),
  aggregate: v.string(),
  sequence: Int,
});
export const EventAnswer = v.strictObject({
  id: v.string(),
  type: v.string(),
  aggregate: v.string(),
  sequence: Int,
  payload: v.unknown(),
  occurredAt: Instant,
  deliverAfter: v.nullable(Instant),
  deliverBy: Instant,
  commitId: v.string(),
  deliveries: v.array(DeliveryInEvent),
});
export const AttemptAnswer = v.strictObject({
  at: Instant,
  durationMs: v.number(),
  statusCode: v.nullable(Int),
  error: v.nullable(v.string()),
  responsePrefix: v.nullable(v.string()),
});
export const ReplayedAnswer = v.strictObject({ replayed: Count });
export const RecoveredAnswer = v.strictObject({
  replayed: Count,
  skipped: v.pipe(
    Count,
    v.description("Dead deliveries in the range whose event was erased: not replayable."),
  ),
  enabled: v.literal(true),
});

// Event types (DESIGN §9)
export const EventTypeAnswer = v.strictObject({
  type: v.string(),
  description: v.nullable(v.string()),
  schema: v.pipe(v.unknown(), v.description("The payload's JSON Schema (draft 2020-12), or null.")),
  deprecated: v.boolean(),
  deprecatedAt: v.nullable(Instant),
  createdAt: Instant,
  updatedAt: Instant,
});

// Proposals (DESIGN §10)
const Actor = v.strictObject({ tokenId: v.string(), tokenName: v.string() });
const PROPOSAL = {
  id: v.string(),
  status: v.picklist(["pending", "approved", "rejected", "conflicted", "expired"]),
  summary: v.string(),
  proposedBy: Actor,
  createdAt: Instant,
  expiresAt: Instant,
  decidedAt: v.nullable(Instant),
  decidedBy: v.nullable(Actor),
  reason: v.nullable(v.string()),
  result: v.pipe(
    v.nullable(v.union([CommitResponse, ProblemAnswer])),
    v.description("Approved: the commit response; conflicted: the problem; otherwise null."),
  ),
};
/** A proposal in a list: without its commit. */
export const ProposalListItem = v.strictObject(PROPOSAL);
export const ProposalAnswer = v.strictObject({ ...PROPOSAL, commit: CommitSchema });
export const ProposalWithCurrentAnswer = v.strictObject({
  ...ProposalAnswer.entries,
  current: v.pipe(
    v.array(
      v.strictObject({
        collection: v.string(),
        id: v.string(),
        version: Int,
        data: v.nullable(JsonObject),
        deleted: v.boolean(),
      }),
    ),
    v.description("Each record of the commit as it is now (`version: 0`, `data: null` if it never existed)."),
  ),
});

// Tokens
export const TokenAnswer = v.strictObject({
  id: v.string(),
  name: v.string(),
  scopes: Scopes,
  createdAt: Instant,
  lastUsedAt: v.nullable(Instant),
  revokedAt: v.nullable(Instant),
});
export const TokenCreatedAnswer = v.strictObject({
  id: v.string(),
  name: v.string(),
  scopes: Scopes,
  createdAt: Instant,
  token: v.string(),
});
export const WhoAmIAnswer = v.strictObject({ id: v.string(), name: v.string(), scopes: Scopes });
export const TokenRevokedAnswer = v.strictObject({ id: v.string(), revoked: v.literal(true) });

// Operations
const COUNTS = {
  pending: Count,
  inFlight: Count,
  due: Count,
  oldestPendingAgeSeconds: v.pipe(v.number(), v.minValue(0)),
  dead: Count,
  deadlineExceededTotal: Count,
  deliveredLastHour: Count,
};
export const StatsAnswer = v.strictObject({
  ...COUNTS,
  endpoints: v.array(
    v.strictObject({
      id: v.string(),
      kind: v.pipe(
        v.nullable(v.picklist(["webhook", "pull"])),
        v.description("outboxd extension: the endpoint's kind; null once it was deleted."),
      ),
      ...COUNTS,
    }),
  ),
});
export const StatsHistoryAnswer = v.strictObject({
  from: Instant,
  to: Instant,
  bucketSeconds: Count,
  buckets: v.array(
    v.strictObject({
      start: Instant,
      delivered: Count,
      latencyP50Ms: v.nullable(v.number()),
      latencyMaxMs: v.nullable(v.number()),
    }),
  ),
});
export const AttemptLogAnswer = v.strictObject({
  ...AttemptAnswer.entries,
  deliveryId: v.string(),
  endpointId: v.nullable(v.string()),
  eventId: v.nullable(v.string()),
  type: v.nullable(v.string()),
  aggregate: v.nullable(v.string()),
  sequence: v.nullable(Int),
});
export const HealthAnswer = v.strictObject({ status: v.literal("ok") });
export const ReadyAnswer = v.strictObject({
  status: v.picklist(["ready", "not ready"]),
  checks: v.record(v.string(), v.string()),
});

/** GET /openapi.json: described loosely here; test/http/openapi.test.ts checks what it holds. */
export const OpenApiAnswer = v.looseObject({
  openapi: v.pipe(v.string(), v.startsWith("3.1")),
  info: v.looseObject({ title: v.string(), version: v.string() }),
  paths: v.record(v.string(), v.record(v.string(), v.unknown())),
  components: v.looseObject({}),
});

// The ledger (DESIGN §13)
const Hash = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/), v.description("Lowercase hex sha256."));
export const RecordVersionAnswer = v.strictObject({
  version: Int,
  data: v.pipe(v.nullable(JsonObject), v.description("null for a delete or an erased version.")),
  deleted: v.boolean(),
  erased: v.pipe(v.boolean(), v.description("outboxd extension: the data was erased (docs/ledger.md).")),
  commitId: v.pipe(v.nullable(v.string()), v.description("null for versions from before the ledger.")),
  committedBy: v.nullable(v.strictObject({ tokenId: v.string(), tokenName: v.nullable(v.string()) })),
  proposalId: v.pipe(v.nullable(v.string()), v.description("outboxd extension: the proposal applied.")),
  at: Instant,
  events: v.array(v.strictObject({ id: v.string(), type: v.string(), aggregate: v.string(), sequence: Int })),
});
const ChainHead = v.strictObject({ seq: Count, commitId: v.string(), hash: Hash, at: Instant });
export const LedgerAnswer = v.strictObject({ commits: Count, head: v.nullable(ChainHead) });
export const ChainLinkAnswer = v.strictObject({ ...ChainHead.entries, previousHash: Hash });
