// Storage operations on endpoints (DESIGN §3 Endpoints): webhook endpoints, which the dispatcher
// sends to, and pull endpoints (§12), whose consumers poll or stream (no url, no secret).
import { all, exec, get, type Op, run } from "../db/op.ts";
import { deadLetterEndpoint } from "../deliveries/dead-letter.ts";
import { newId } from "../lib/ids.ts";
import { iso } from "../lib/time.ts";
import {
  type Condition,
  DEFAULT_DISABLE_AFTER,
  DISABLE_MIN_FAILURES,
  disableAfterMs,
  type RateLimit,
} from "./controls.ts";

export type EndpointKind = "webhook" | "pull";
export type DisabledReason = "operator" | "gone" | "failing";

export interface EndpointRow {
  id: string;
  kind: EndpointKind;
  url: string;
  eventTypes: string;
  description: string | null;
  secrets: string;
  disabled: number;
  disabledReason: DisabledReason | null;
  disabledDetail: string | null;
  disabledAt: number | null;
  createdAt: number;
  updatedAt: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  /** JSON text or null (controls.ts). */
  rateLimit: string | null;
  retrySchedule: string | null;
  filter: string | null;
  disableAfter: string;
  failingSince: number | null;
  failuresSince: number;
}

export interface EndpointView {
  id: string;
  kind: EndpointKind;
  /** null for a pull endpoint. */
  url: string | null;
  eventTypes: string[];
  description: string | null;
  disabled: boolean;
  /** operator | gone (a 410 answer) | failing (disableAfter), null while enabled. */
  disabledReason: DisabledReason | null;
  disabledDetail: string | null;
  disabledAt: string | null;
  createdAt: string;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  rateLimit: RateLimit | null;
  retrySchedule: string[] | null;
  disableAfter: string;
  failingSince: string | null;
  filter: Condition[] | null;
  pending: number;
  dead: number;
}

const COLUMNS = `id, kind, url, event_types AS eventTypes, description, secrets, disabled, disabled_reason AS disabledReason,
  disabled_detail AS disabledDetail, disabled_at AS disabledAt, created_at AS createdAt, updated_at AS updatedAt,
  last_success_at AS lastSuccessAt, last_failure_at AS lastFailureAt, rate_limit AS rateLimit,
  retry_schedule AS retrySchedule, filter, disable_after AS disableAfter, failing_since AS failingSince,
  failures_since AS failuresSince`;
const COUNTS = `(SELECT count(*) FROM deliveries d WHERE d.endpoint_id = endpoints.id AND d.status = 'pending') AS pending,
  (SELECT count(*) FROM deliveries d WHERE d.endpoint_id = endpoints.id AND d.status = 'dead') AS dead`;

type CountedRow = EndpointRow & { pending: number; dead: number };

function view(row: CountedRow): EndpointView {
  return {
    id: row.id,
    kind: row.kind,
    url: row.kind === "pull" ? null : row.url,
    eventTypes: JSON.parse(row.eventTypes) as string[],
    description: row.description,
    disabled: row.disabled === 1,
    disabledReason: row.disabled === 1 ? row.disabledReason : null,
    disabledDetail: row.disabled === 1 ? row.disabledDetail : null,
    disabledAt: row.disabled === 1 ? iso(row.disabledAt) : null,
    createdAt: iso(row.createdAt),
    lastSuccessAt: iso(row.lastSuccessAt),
    lastFailureAt: iso(row.lastFailureAt),
    rateLimit: parsed<RateLimit>(row.rateLimit),
    retrySchedule: parsed<string[]>(row.retrySchedule),
    disableAfter: row.disableAfter,
    failingSince: iso(row.failingSince),
    filter: parsed<Condition[]>(row.filter),
    pending: row.pending,
    dead: row.dead,
  };
}

function parsed<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** The controls as stored: JSON text, null when not set (undefined in a change: unchanged). */
export interface StoredControls {
  rateLimit: RateLimit | null;
  retrySchedule: string[] | null;
  filter: Condition[] | null;
  disableAfter: string;
}

function stored<T>(value: T | null | undefined): string | null | undefined {
  return value === undefined ? undefined : value === null ? null : JSON.stringify(value);
}

export interface NewEndpoint {
  /** Defaults to "webhook". */
  kind?: EndpointKind;
  /** '' for a pull endpoint. */
  url: string;
  eventTypes: string[];
  description: string | null;
  sealedSecrets: string;
  /** Unset: none, and disableAfter DEFAULT_DISABLE_AFTER ("never" on a pull endpoint, which is never disabled so). */
  controls?: Partial<StoredControls>;
}

export function* createEndpoint(input: NewEndpoint, now: number): Op<EndpointView> {
  const id = newId("ep", now);
  const kind = input.kind ?? "webhook";
  const controls = input.controls ?? {};
  yield* run(
    `INSERT INTO endpoints (id, kind, url, event_types, description, secrets, created_at, updated_at,
       rate_limit, retry_schedule, filter, disable_after)
     VALUES (:id, :kind, :url, :eventTypes, :description, :secrets, :now, :now,
       :rateLimit, :retrySchedule, :filter, :disableAfter)`,
    {
      id,
      kind,
      url: input.url,
      eventTypes: JSON.stringify(input.eventTypes),
      description: input.description,
      secrets: input.sealedSecrets,
      now,
      rateLimit: stored(controls.rateLimit) ?? null,
      retrySchedule: stored(controls.retrySchedule) ?? null,
      filter: stored(controls.filter) ?? null,
      disableAfter: controls.disableAfter ?? (kind === "pull" ? "never" : DEFAULT_DISABLE_AFTER),
    },
  );
  return (yield* getEndpoint(id)) as EndpointView;
}

export function* getEndpoint(id: string): Op<EndpointView | undefined> {
  const row = yield* get<CountedRow>(`SELECT ${COLUMNS}, ${COUNTS} FROM endpoints WHERE id = :id`, { id });
  return row ? view(row) : undefined;
}

/** The raw row including the sealed secrets, for signing and rotation. */
export function* getEndpointRow(id: string): Op<EndpointRow | undefined> {
  return yield* get<EndpointRow>(`SELECT ${COLUMNS} FROM endpoints WHERE id = :id`, { id });
}

export function* listEndpoints(limit: number, after: string | undefined): Op<EndpointView[]> {
  const rows = yield* all<CountedRow>(
    `SELECT ${COLUMNS}, ${COUNTS} FROM endpoints WHERE (:after IS NULL OR id < :after) ORDER BY id DESC LIMIT :limit`,
    { after: after ?? null, limit },
  );
  return rows.map(view);
}

export function* countEndpoints(): Op<number> {
  return (yield* get<{ n: number }>("SELECT count(*) AS n FROM endpoints"))?.n ?? 0;
}

export interface EndpointChanges {
  url?: string | undefined;
  eventTypes?: string[] | undefined;
  description?: string | null | undefined;
  /** true disables (by an operator), false enables again. */
  disabled?: boolean | undefined;
  /** Per control: undefined leaves it, null removes it (rateLimit, retrySchedule, filter). */
  controls?: Partial<StoredControls> | undefined;
}

/** An endpoint's change between enabled and disabled (DESIGN §19: each one commits a system event). */
export interface StateChange {
  endpointId: string;
  description: string | null;
  to: "disabled" | "enabled";
  reason: DisabledReason | null;
  failingSince: number | null;
  lastError: string | null;
}

export interface Updated {
  endpoint: EndpointView;
  change: StateChange | null;
}

export function* updateEndpoint(id: string, changes: EndpointChanges, now: number): Op<Updated | undefined> {
  const before = yield* getEndpointRow(id);
  if (!before) return undefined;
  const controls = changes.controls ?? {};
  const disable = changes.disabled === true && before.disabled === 0;
  const enable = changes.disabled === false && before.disabled === 1;
  yield* run(
    `UPDATE endpoints SET
       url = coalesce(:url, url),
       event_types = coalesce(:eventTypes, event_types),
       description = CASE WHEN :setDescription = 1 THEN :description ELSE description END,
       rate_limit = CASE WHEN :setRateLimit = 1 THEN :rateLimit ELSE rate_limit END,
       retry_schedule = CASE WHEN :setRetrySchedule = 1 THEN :retrySchedule ELSE retry_schedule END,
       filter = CASE WHEN :setFilter = 1 THEN :filter ELSE filter END,
       disable_after = coalesce(:disableAfter, disable_after),
       updated_at = :now
     WHERE id = :id`,
    {
      id,
      url: changes.url ?? null,
      eventTypes: changes.eventTypes ? JSON.stringify(changes.eventTypes) : null,
      setDescription: changes.description === undefined ? 0 : 1,
      description: changes.description ?? null,
      setRateLimit: controls.rateLimit === undefined ? 0 : 1,
      rateLimit: stored(controls.rateLimit) ?? null,
      setRetrySchedule: controls.retrySchedule === undefined ? 0 : 1,
      retrySchedule: stored(controls.retrySchedule) ?? null,
      setFilter: controls.filter === undefined ? 0 : 1,
      filter: stored(controls.filter) ?? null,
      disableAfter: controls.disableAfter ?? null,
      now,
    },
  );
  let change: StateChange | null = null;
  if (disable) change = yield* disableEndpoint(id, "operator", "disabled by an operator", now);
  else if (enable) change = yield* enableEndpoint(id, now);
  return { endpoint: (yield* getEndpoint(id)) as EndpointView, change };
}

// The state changes below read the row first and then write without RETURNING: on the remote
// write path (db/remote-writer.ts) a read is answered and guarded, and a write that returns rows
// must be an operation's last statement, which these are not (a system event's commit follows).

interface StateRow {
  description: string | null;
  disabled: number;
  failingSince: number | null;
  failuresSince: number;
  disableAfter: string;
  kind: EndpointKind;
}

function* stateOf(id: string): Op<StateRow | undefined> {
  return yield* get<StateRow>(
    `SELECT description, disabled, failing_since AS failingSince, failures_since AS failuresSince,
       disable_after AS disableAfter, kind FROM endpoints WHERE id = :id`,
    { id },
  );
}

/**
 * disableAfter (DESIGN §19): `failures` more failed attempts (non-2xx but 429, or no answer) at
 * `at`; failing_since is set by the first after the latest 2xx, enable or creation. Disables the
 * endpoint (reason failing) once failing_since ≤ at − disableAfter and at least
 * DISABLE_MIN_FAILURES failed since: the change, or null.
 */
export function* recordFailures(
  id: string,
  failures: number,
  lastError: string | null,
  at: number,
): Op<StateChange | null> {
  const row = yield* stateOf(id);
  if (!row || row.kind !== "webhook" || row.disabled === 1) return null;
  const failingSince = row.failingSince ?? at;
  const failuresSince = row.failuresSince + failures;
  yield* exec(
    "UPDATE endpoints SET failing_since = :failingSince, failures_since = :failuresSince WHERE id = :id",
    { id, failingSince, failuresSince },
  );
  const after = disableAfterMs(row.disableAfter);
  if (after === null || failingSince > at - after || failuresSince < DISABLE_MIN_FAILURES) return null;
  return yield* disableRow(id, { ...row, failingSince }, "failing", lastError, at);
}

/** A 2xx: the endpoint is no longer failing (a no-op write when it was not). */
export function* clearFailing(id: string): Op<void> {
  yield* exec(
    "UPDATE endpoints SET failing_since = NULL, failures_since = 0 WHERE id = :id AND failing_since IS NOT NULL",
    { id },
  );
}

/**
 * enabled → disabled, for `reason` (`detail`: the text shown with it; for gone and failing the
 * last error): the change, or null when it was disabled already (then nothing is written: a
 * transition happens once).
 */
export function* disableEndpoint(
  id: string,
  reason: DisabledReason,
  detail: string | null,
  now: number,
): Op<StateChange | null> {
  const row = yield* stateOf(id);
  if (!row || row.disabled === 1) return null;
  return yield* disableRow(id, row, reason, detail, now);
}

function* disableRow(
  id: string,
  row: StateRow,
  reason: DisabledReason,
  detail: string | null,
  now: number,
): Op<StateChange> {
  yield* exec(
    `UPDATE endpoints SET disabled = 1, disabled_reason = :reason, disabled_detail = :detail, disabled_at = :now,
       updated_at = :now
     WHERE id = :id`,
    { id, reason, detail, now },
  );
  return {
    endpointId: id,
    description: row.description,
    to: "disabled",
    reason,
    failingSince: row.failingSince,
    lastError: reason === "operator" ? null : detail,
  };
}

/**
 * disabled → enabled: failing_since starts again; the change, or null when it was enabled already.
 */
export function* enableEndpoint(id: string, now: number): Op<StateChange | null> {
  const row = yield* stateOf(id);
  if (!row || row.disabled === 0) return null;
  yield* exec(
    `UPDATE endpoints SET disabled = 0, disabled_reason = NULL, disabled_detail = NULL, disabled_at = NULL,
       failing_since = NULL, failures_since = 0, updated_at = :now
     WHERE id = :id`,
    { id, now },
  );
  return {
    endpointId: id,
    description: row.description,
    to: "enabled",
    reason: null,
    failingSince: null,
    lastError: null,
  };
}

/**
 * Deletes an endpoint. Its undelivered deliveries become dead with `endpoint_deleted`
 * (src/deliveries/dead-letter.ts).
 */
export function* deleteEndpoint(id: string, now: number): Op<{ deleted: boolean; deadLettered: number }> {
  const deadLettered = yield* deadLetterEndpoint(id, now);
  const deleted = (yield* run("DELETE FROM endpoints WHERE id = :id", { id })) > 0;
  return { deleted, deadLettered };
}

/**
 * Re-seals every endpoint's secret list with `reseal` (master-key rotation). One write: if
 * `reseal` throws for any endpoint, nothing is changed. Returns how many endpoints it re-sealed.
 */
export function* resealAllSecrets(reseal: (sealed: string, id: string) => string): Op<number> {
  const rows = yield* all<{ id: string; secrets: string }>("SELECT id, secrets FROM endpoints ORDER BY id");
  for (const row of rows) {
    yield* run("UPDATE endpoints SET secrets = :secrets WHERE id = :id", {
      id: row.id,
      secrets: reseal(row.secrets, row.id),
    });
  }
  return rows.length;
}
