// The event-type catalog's rows (DESIGN §9). Every change bumps one counter in the same
// transaction, so a process can tell with one cheap read whether its cached catalog is stale.
import { all, get, type Op, run } from "../db/op.ts";
import { iso } from "../lib/time.ts";

export interface EventTypeRow {
  type: string;
  description: string | null;
  /** JSON Schema text, or null. */
  schema: string | null;
  deprecatedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface EventTypeView {
  type: string;
  description: string | null;
  schema: unknown;
  deprecated: boolean;
  /** Additive: when the type was deprecated (the Deprecation header's date), null if it is not. */
  deprecatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface EventTypeWrite {
  type: string;
  description: string | null;
  schema: string | null;
  deprecated: boolean;
}

const VERSION_COUNTER = "event_types_version";
const COLUMNS = `type, description, schema, deprecated_at AS deprecatedAt, created_at AS createdAt,
  updated_at AS updatedAt`;

export function view(row: EventTypeRow): EventTypeView {
  return {
    type: row.type,
    description: row.description,
    schema: row.schema === null ? null : (JSON.parse(row.schema) as unknown),
    deprecated: row.deprecatedAt !== null,
    deprecatedAt: iso(row.deprecatedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

function* bumpVersion(): Op<number> {
  yield* run(
    `INSERT INTO counters (name, value) VALUES (:name, 1)
       ON CONFLICT (name) DO UPDATE SET value = value + 1`,
    { name: VERSION_COUNTER },
  );
  return yield* catalogVersion();
}

/** The catalog's version: 0 before the first change, +1 per change. */
export function* catalogVersion(): Op<number> {
  return (
    (yield* get<{ value: number }>("SELECT value FROM counters WHERE name = :name", {
      name: VERSION_COUNTER,
    }))?.value ?? 0
  );
}

/** Replaces the whole entry (omitted fields reset); a type that stays deprecated keeps its date. */
export function* putEventType(
  write: EventTypeWrite,
  now: number,
): Op<{ row: EventTypeRow; created: boolean; version: number }> {
  const current = yield* get<EventTypeRow>(`SELECT ${COLUMNS} FROM event_types WHERE type = :type`, {
    type: write.type,
  });
  const row: EventTypeRow = {
    type: write.type,
    description: write.description,
    schema: write.schema,
    deprecatedAt: write.deprecated ? (current?.deprecatedAt ?? now) : null,
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  };
  yield* run(
    `INSERT INTO event_types (type, description, schema, deprecated_at, created_at, updated_at)
       VALUES (:type, :description, :schema, :deprecatedAt, :createdAt, :updatedAt)
       ON CONFLICT (type) DO UPDATE SET description = excluded.description, schema = excluded.schema,
         deprecated_at = excluded.deprecated_at, updated_at = excluded.updated_at`,
    { ...row },
  );
  return { row, created: !current, version: yield* bumpVersion() };
}

/** Removes a type; undefined when there was none. */
export function* deleteEventType(type: string): Op<number | undefined> {
  const removed = yield* run("DELETE FROM event_types WHERE type = :type", { type });
  return removed > 0 ? yield* bumpVersion() : undefined;
}

/** The whole catalog with its version, read together (one read transaction). */
export function* loadCatalog(): Op<{ version: number; rows: EventTypeRow[] }> {
  const version = yield* catalogVersion();
  const rows = yield* all<EventTypeRow>(`SELECT ${COLUMNS} FROM event_types ORDER BY type`);
  return { version, rows };
}

export function* getEventType(type: string): Op<EventTypeRow | undefined> {
  return yield* get<EventTypeRow>(`SELECT ${COLUMNS} FROM event_types WHERE type = :type`, { type });
}

/** Ordered by type; `after` = the last type seen. */
export function* listEventTypes(limit: number, after: string | undefined): Op<EventTypeRow[]> {
  return yield* all<EventTypeRow>(
    `SELECT ${COLUMNS} FROM event_types WHERE (:after IS NULL OR type > :after) ORDER BY type LIMIT :limit`,
    { after: after ?? null, limit },
  );
}
