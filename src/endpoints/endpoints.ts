// Storage operations on endpoints (DESIGN §3 Endpoints): webhook endpoints, which the dispatcher
// sends to, and pull endpoints (§12), whose consumers poll or stream (no url, no secret).
import { all, get, type Op, run } from "../db/op.ts";
import { deadLetterEndpoint } from "../deliveries/dead-letter.ts";
import { newId } from "../lib/ids.ts";
import { iso } from "../lib/time.ts";

export type EndpointKind = "webhook" | "pull";

export interface EndpointRow {
  id: string;
  kind: EndpointKind;
  url: string;
  eventTypes: string;
  description: string | null;
  secrets: string;
  disabled: number;
  disabledReason: string | null;
  createdAt: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
}

export interface EndpointView {
  id: string;
  kind: EndpointKind;
  /** null for a pull endpoint. */
  url: string | null;
  eventTypes: string[];
  description: string | null;
  disabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  pending: number;
  dead: number;
}

const COLUMNS = `id, kind, url, event_types AS eventTypes, description, secrets, disabled, disabled_reason AS disabledReason,
  created_at AS createdAt, last_success_at AS lastSuccessAt, last_failure_at AS lastFailureAt`;
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
    disabledReason: row.disabledReason,
    createdAt: iso(row.createdAt),
    lastSuccessAt: iso(row.lastSuccessAt),
    lastFailureAt: iso(row.lastFailureAt),
    pending: row.pending,
    dead: row.dead,
  };
}

export interface NewEndpoint {
  /** Defaults to "webhook". */
  kind?: EndpointKind;
  /** '' for a pull endpoint. */
  url: string;
  eventTypes: string[];
  description: string | null;
  sealedSecrets: string;
}

export function* createEndpoint(input: NewEndpoint, now: number): Op<EndpointView> {
  const id = newId("ep", now);
  yield* run(
    `INSERT INTO endpoints (id, kind, url, event_types, description, secrets, created_at, updated_at)
     VALUES (:id, :kind, :url, :eventTypes, :description, :secrets, :now, :now)`,
    {
      id,
      kind: input.kind ?? "webhook",
      url: input.url,
      eventTypes: JSON.stringify(input.eventTypes),
      description: input.description,
      secrets: input.sealedSecrets,
      now,
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
}

export function* updateEndpoint(
  id: string,
  changes: EndpointChanges,
  now: number,
): Op<EndpointView | undefined> {
  const changed = yield* run(
    `UPDATE endpoints SET
       url = coalesce(:url, url),
       event_types = coalesce(:eventTypes, event_types),
       description = CASE WHEN :setDescription = 1 THEN :description ELSE description END,
       disabled = coalesce(:disabled, disabled),
       disabled_reason = CASE WHEN :disabled = 1 THEN 'disabled by an operator' WHEN :disabled = 0 THEN NULL ELSE disabled_reason END,
       updated_at = :now
     WHERE id = :id`,
    {
      id,
      url: changes.url ?? null,
      eventTypes: changes.eventTypes ? JSON.stringify(changes.eventTypes) : null,
      setDescription: changes.description === undefined ? 0 : 1,
      description: changes.description ?? null,
      disabled: changes.disabled === undefined ? null : changes.disabled ? 1 : 0,
      now,
    },
  );
  return changed > 0 ? yield* getEndpoint(id) : undefined;
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
