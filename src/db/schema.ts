// The tables of DESIGN §2. This file is the source of truth for the migrations in
// `migrations/` (drizzle-kit generates them from it); runtime SQL lives in `src/db/sql.ts`.
// Times are integer milliseconds since the epoch (UTC); JSON columns hold text.
import { sql } from "drizzle-orm";
import {
  check,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

export const records = sqliteTable(
  "records",
  {
    collection: text("collection").notNull(),
    id: text("id").notNull(),
    version: integer("version").notNull(),
    data: text("data").notNull(),
    deleted: integer("deleted").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    // The ledger (src/ledger): the current version's commit (null: taken over from before the
    // ledger, the genesis commit) and the sha256 of its data's JCS (null for a delete). Its
    // earlier versions are in record_versions.
    commitId: text("commit_id"),
    dataDigest: text("data_digest"),
  },
  (t) => [primaryKey({ columns: [t.collection, t.id] })],
);

export const events = sqliteTable(
  "events",
  {
    // rowid alias: the commit order, used for "newest first" listing cursors.
    pos: integer("pos").primaryKey(),
    id: text("id").notNull(),
    type: text("type").notNull(),
    aggregate: text("aggregate").notNull(),
    sequence: integer("sequence").notNull(),
    payload: text("payload").notNull(),
    occurredAt: integer("occurred_at").notNull(),
    deliverAfter: integer("deliver_after"),
    deliverBy: integer("deliver_by").notNull(),
    commitId: text("commit_id").notNull(),
    traceparent: text("traceparent"),
    // The ledger (src/ledger): sha256 of the payload's JCS, chained through the commit's hash;
    // null for events from before the ledger (unchained). erased_at: the payload was erased
    // (personal data) and replaced by null; the digest still proves what it was.
    payloadDigest: text("payload_digest"),
    erasedAt: integer("erased_at"),
  },
  (t) => [
    uniqueIndex("events_id").on(t.id),
    // No index on commit_id: a chained commit finds its events by position (commits.event_pos).
    uniqueIndex("events_aggregate_sequence").on(t.aggregate, t.sequence),
    index("events_type").on(t.type, t.pos),
  ],
);

export const endpoints = sqliteTable("endpoints", {
  id: text("id").primaryKey(),
  // "webhook": the dispatcher sends to `url`; "pull": consumers poll or stream (DESIGN §12), the
  // url is '' and the secret list empty.
  kind: text("kind", { enum: ["webhook", "pull"] })
    .notNull()
    .default("webhook"),
  url: text("url").notNull(),
  eventTypes: text("event_types").notNull(),
  description: text("description"),
  // JSON list of {secret, expiresAt}; AES-GCM sealed when a master key is configured.
  secrets: text("secrets").notNull(),
  disabled: integer("disabled").notNull().default(0),
  // Why it is disabled (DESIGN §19): operator | gone (a 410 answer) | failing (disableAfter);
  // disabled_detail the text (the 410's answer, the last error), disabled_at since when.
  disabledReason: text("disabled_reason"),
  disabledDetail: text("disabled_detail"),
  disabledAt: integer("disabled_at"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  lastSuccessAt: integer("last_success_at"),
  lastFailureAt: integer("last_failure_at"),
  // Endpoint controls (DESIGN §19, src/endpoints/controls.ts). JSON text, null when not set:
  // rate_limit {"perSecond", "burst"}, retry_schedule ["5s", …], filter [{"path", "op", "value"}].
  rateLimit: text("rate_limit"),
  retrySchedule: text("retry_schedule"),
  filter: text("filter"),
  // A duration or "never"; endpoints that exist at upgrade keep "never", new ones get "5d".
  disableAfter: text("disable_after").notNull().default("never"),
  // The first failed attempt after the latest 2xx, enable or creation, and the failures since.
  failingSince: integer("failing_since"),
  failuresSince: integer("failures_since").notNull().default(0),
});

/**
 * Each (endpoint, aggregate) queue's latest sequence with a delivery (DESIGN §19
 * previousSequence): a new delivery's previous_sequence is read here and the row moved on, in
 * the transaction that creates the delivery. Delivered deliveries are pruned; this is not.
 * WITHOUT ROWID (migration 0018, written by hand: drizzle-kit cannot say it), one b-tree.
 */
export const queueTails = sqliteTable(
  "queue_tails",
  {
    endpointId: text("endpoint_id").notNull(),
    aggregate: text("aggregate").notNull(),
    sequence: integer("sequence").notNull(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.aggregate] })],
);

/**
 * The token bucket of each rate-limited endpoint (DESIGN §19 rateLimit), shared by every
 * dispatcher on the database: `tokens` as of `at` (ms); refilled at perSecond up to burst.
 */
export const endpointBuckets = sqliteTable("endpoint_buckets", {
  endpointId: text("endpoint_id").primaryKey(),
  tokens: real("tokens").notNull(),
  at: integer("at").notNull(),
});

export const deliveries = sqliteTable(
  "deliveries",
  {
    id: text("id").primaryKey(),
    eventId: text("event_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    // Copied from the event so the claim can find the head of each (endpoint, aggregate) queue by index.
    aggregate: text("aggregate").notNull(),
    sequence: integer("sequence").notNull(),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: ["pending", "delivered", "dead"] }).notNull(),
    // 1 on the pending delivery with the lowest sequence of its (endpoint, aggregate) queue: the
    // only one the claim may take. Kept so in every transaction that moves a row into or out
    // of pending (src/deliveries/heads.ts), so a claim reads heads only, whatever the backlog.
    isHead: integer("is_head").notNull().default(0),
    attemptCount: integer("attempt_count").notNull().default(0),
    // The later of the commit and deliverAfter: the moment the delivery became due the first time.
    availableAt: integer("available_at").notNull(),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    deliverBy: integer("deliver_by").notNull(),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: integer("lease_expires_at"),
    deliveredAt: integer("delivered_at"),
    deadAt: integer("dead_at"),
    deadReason: text("dead_reason"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    // The attempt (attempts.pos) that delivered it, when a dispatcher's batch recorded it so
    // (src/deliveries/complete.ts); that attempt is out of attempts_delivery (attempts.on_delivery).
    // A delivered row never becomes pending again (replay takes dead rows only), so it is set once.
    deliveredAttempt: integer("delivered_attempt"),
    // The sequence of the same aggregate's latest earlier event with a delivery to this endpoint
    // (queue_tails), null when none: fixed at creation, signed in the body (DESIGN §19).
    previousSequence: integer("previous_sequence"),
  },
  (t) => [
    // The ready heads, endpoint by endpoint: the dispatcher's scanning claim and a consumer's poll
    // walk one endpoint's range (src/deliveries/claim.ts, lease.ts), stats count them per
    // endpoint. There is no second index of the heads by next_attempt_at alone: every head would
    // enter and leave both, and no query needs it.
    index("deliveries_endpoint_ready")
      .on(t.endpointId, t.nextAttemptAt)
      .where(sql`status = 'pending' AND is_head = 1`),
    // The head of each (endpoint, aggregate) queue, by queue: whether a queue has a pending row
    // (it has one iff it has a head), for a new delivery's head flag and a replay's. Heads only:
    // a queue's next head is found through events(aggregate, sequence) when its head leaves
    // (src/deliveries/heads.ts), so a waiting row enters and leaves no index of its queue (an index
    // of every pending row by (endpoint, aggregate, sequence) would cost a drain of 1,000
    // aggregates a leaf page per delivery).
    index("deliveries_heads").on(t.endpointId, t.aggregate).where(sql`status = 'pending' AND is_head = 1`),
    // Pending rows by endpoint, oldest deadline first: the sweep's expiry walks each endpoint's
    // range; counts of an endpoint's pending rows and its dead-lettering read its range alone.
    index("deliveries_deadline").on(t.endpointId, t.deliverBy).where(sql`status = 'pending'`),
    index("deliveries_event").on(t.eventId),
    // Dead letters are few and listed often; the rest is found through the primary key, whose
    // time-ordered ids put the newest (pending) rows first. Fewer indexes on this table make
    // every claim and completion cheaper.
    index("deliveries_dead").on(t.id).where(sql`status = 'dead'`),
    index("deliveries_dead_endpoint").on(t.endpointId, t.id).where(sql`status = 'dead'`),
    index("deliveries_delivered_at").on(t.deliveredAt).where(sql`status = 'delivered'`),
  ],
);

/**
 * A commit's fan-out written compactly, waiting to become deliveries (src/deliveries/enqueue.ts):
 * a commit with more deliveries than it may insert inline stores one row per event here, in its
 * own transaction, with every delivery's id and endpoint; the rows are expanded into deliveries
 * in small transactions right after it (oldest first), and deleted when done. `done` counts
 * the targets already expanded. While an aggregate has a row here, a commit's events of that
 * aggregate come here too, so expansion never lets a later event overtake an earlier one.
 */
export const fanOuts = sqliteTable(
  "fan_outs",
  {
    pos: integer("pos").primaryKey(),
    eventId: text("event_id").notNull(),
    aggregate: text("aggregate").notNull(),
    sequence: integer("sequence").notNull(),
    eventType: text("event_type").notNull(),
    availableAt: integer("available_at").notNull(),
    deliverBy: integer("deliver_by").notNull(),
    createdAt: integer("created_at").notNull(),
    // JSON [[deliveryId, endpointId], …] in the order the commit answered them.
    targets: text("targets").notNull(),
    done: integer("done").notNull().default(0),
  },
  (t) => [index("fan_outs_aggregate").on(t.aggregate), index("fan_outs_event").on(t.eventId)],
);

export const attempts = sqliteTable(
  "attempts",
  {
    pos: integer("pos").primaryKey(),
    deliveryId: text("delivery_id").notNull(),
    startedAt: integer("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    responsePrefix: text("response_prefix"),
    // 1 on the attempt that delivered its delivery, when the delivery row records which it was
    // (deliveries.delivered_attempt): a delivery's attempts are those of attempts_delivery and
    // that one (src/deliveries/read.ts listAttempts). Null on every other attempt.
    onDelivery: integer("on_delivery"),
  },
  (t) => [
    // A delivery's attempts but the success its row points at: a drain appends one attempt per
    // delivery, and each success entered this index at its delivery's place, a random leaf page
    // per delivery (~a quarter of a drain's WAL pages). Failures, fenced
    // successes and acks are still found here.
    index("attempts_delivery").on(t.deliveryId, t.pos).where(sql`on_delivery IS NULL`),
  ],
);

/**
 * One row per successful commit: who committed it and, from the ledger on, its place in the hash
 * chain (DESIGN §13; src/ledger). Rows from before the ledger have no seq. Never pruned.
 */
export const commits = sqliteTable(
  "commits",
  {
    id: text("id").primaryKey(),
    // null only for the genesis commit, written by the ledger migration.
    tokenId: text("token_id"),
    createdAt: integer("created_at").notNull(),
    // Gap-free position in the chain, in apply order; 0 = the genesis commit.
    seq: integer("seq"),
    // Lowercase hex sha256(previous hash + JCS(content)).
    hash: text("hash"),
    tokenName: text("token_name"),
    proposalId: text("proposal_id"),
    // How many versions and events the chained content lists: lets `outboxd verify` say that one
    // was removed rather than only that the hash differs.
    recordCount: integer("record_count"),
    eventCount: integer("event_count"),
    // The versions the commit wrote, as a JSON array of [collection, id, version]: where
    // `outboxd verify` finds them (records for a current version, record_versions for an older one).
    recordKeys: text("record_keys"),
    // The pos of the commit's last event: its events are the event_count rows of events ending
    // there (a commit inserts its events one after another in its transaction). Null when it
    // inserted none, and for commits from before the ledger.
    eventPos: integer("event_pos"),
  },
  (t) => [uniqueIndex("commits_seq").on(t.seq)],
);

/**
 * The stored answer of a commit made with an Idempotency-Key, for retries (DESIGN §3): kept
 * apart from the commit row because it expires (pruned by its time-prefixed commit id).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    commitId: text("commit_id").primaryKey(),
    tokenId: text("token_id").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    response: text("response").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("idempotency_keys_token_key").on(t.tokenId, t.key)],
);

/**
 * Every earlier version of every record (DESIGN §13): a record's current version lives in its
 * records row (commit_id, data_digest), and moves here, in the transaction of the commit that
 * writes the next one. So a commit that creates a record writes no row here, and one that
 * changes a record writes one. `data` is null for a delete, and for an erased version
 * (erased_at set; the digest still proves what it was). commit_id is null for the versions the
 * ledger migration took over from older databases. pos: the order versions were superseded in.
 */
export const recordVersions = sqliteTable(
  "record_versions",
  {
    pos: integer("pos").primaryKey(),
    collection: text("collection").notNull(),
    id: text("id").notNull(),
    version: integer("version").notNull(),
    data: text("data"),
    deleted: integer("deleted").notNull(),
    dataDigest: text("data_digest"),
    commitId: text("commit_id"),
    at: integer("at").notNull(),
    erasedAt: integer("erased_at"),
  },
  (t) => [uniqueIndex("record_versions_key").on(t.collection, t.id, t.version)],
);

export const tokens = sqliteTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    // SHA-256 of the token; the token itself is never stored.
    hash: text("hash").notNull(),
    scopes: text("scopes").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("tokens_hash").on(t.hash)],
);

/**
 * Deliveries per minute, endpoint and latency (rounded down to two significant digits),
 * counted as they are marked delivered: "delivered in the last hour" and the dashboard's
 * per-minute history read a few hundred rows, however many deliveries the hour saw.
 */
export const deliveredMinutes = sqliteTable(
  "delivered_minutes",
  {
    minute: integer("minute").notNull(),
    endpointId: text("endpoint_id").notNull(),
    // Commit (or deliverAfter, or replay) to 2xx, in ms: 0-99 exactly, then two significant digits.
    latencyFloor: integer("latency_floor").notNull(),
    count: integer("count").notNull(),
    maxLatencyMs: integer("max_latency_ms").notNull(),
  },
  // Minute first: "the last hour" is a range of the primary key.
  (t) => [primaryKey({ columns: [t.minute, t.endpointId, t.latencyFloor] })],
);

/** Monotonic totals that must survive restarts (e.g. deadline_exceeded). */
export const counters = sqliteTable("counters", {
  name: text("name").primaryKey(),
  value: integer("value").notNull(),
});

/**
 * The event-type catalog (DESIGN §9). `schema` is the JSON Schema text for the payload, null
 * for none. Every change bumps the `event_types_version` counter, which is how other
 * processes learn that their cached catalog is stale.
 */
export const eventTypes = sqliteTable("event_types", {
  type: text("type").primaryKey(),
  description: text("description"),
  schema: text("schema"),
  // When the type became deprecated (ms), null while it is not: the Deprecation header's date.
  deprecatedAt: integer("deprecated_at"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * Proposals (DESIGN §10): a commit held until a person with `approve` decides. `commit` is the
 * proposed POST /v1/commits body as JSON text; `result` the commit response once approved, or
 * the problem document that stopped it (conflicted).
 */
export const proposals = sqliteTable(
  "proposals",
  {
    id: text("id").primaryKey(),
    status: text("status", { enum: ["pending", "approved", "rejected", "conflicted", "expired"] }).notNull(),
    summary: text("summary").notNull(),
    commit: text("commit").notNull(),
    proposedByTokenId: text("proposed_by_token_id").notNull(),
    proposedByTokenName: text("proposed_by_token_name").notNull(),
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    decidedAt: integer("decided_at"),
    decidedByTokenId: text("decided_by_token_id"),
    decidedByTokenName: text("decided_by_token_name"),
    reason: text("reason"),
    result: text("result"),
    commitId: text("commit_id"),
  },
  (t) => [
    index("proposals_status").on(t.status, t.id),
    index("proposals_pending_expiry").on(t.expiresAt).where(sql`status = 'pending'`),
    uniqueIndex("proposals_idempotency")
      .on(t.proposedByTokenId, t.idempotencyKey)
      .where(sql`idempotency_key IS NOT NULL`),
  ],
);

/**
 * Always empty. The remote write path (src/db/remote-writer.ts) ends each group's batch with
 * guard statements that insert a 0 here when something the group read has changed since; the
 * CHECK refuses it, which aborts and rolls back the whole batch (SQLite raises no error from
 * plain SQL otherwise).
 */
export const writeGuards = sqliteTable("write_guards", { held: integer("held").notNull() }, (t) => [
  check("write_guard_failed", sql`${t.held} = 1`),
]);
