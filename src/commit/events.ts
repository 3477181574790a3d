// Reads of committed events (DESIGN §3 GET /v1/events).
import { all, get, type Op } from "../db/op.ts";
import { deliveriesOfEvent, deliveryInEvent } from "../deliveries/read.ts";
import { iso } from "../lib/time.ts";

interface EventRow {
  pos: number;
  id: string;
  type: string;
  aggregate: string;
  sequence: number;
  payload: string;
  occurredAt: number;
  deliverAfter: number | null;
  deliverBy: number;
  commitId: string;
}

const COLUMNS = `pos, id, type, aggregate, sequence, payload, occurred_at AS occurredAt, deliver_after AS deliverAfter,
  deliver_by AS deliverBy, commit_id AS commitId`;

function view(row: EventRow) {
  return {
    id: row.id,
    type: row.type,
    aggregate: row.aggregate,
    sequence: row.sequence,
    payload: JSON.parse(row.payload) as unknown,
    occurredAt: iso(row.occurredAt),
    deliverAfter: iso(row.deliverAfter),
    deliverBy: iso(row.deliverBy),
    commitId: row.commitId,
  };
}

export type EventView = ReturnType<typeof view> & { deliveries: ReturnType<typeof deliveryInEvent>[] };

export interface EventFilter {
  aggregate?: string | undefined;
  type?: string | undefined;
}

/**
 * With an aggregate: in sequence order, `after` = the last sequence seen. Without: newest first,
 * `after` = the last position seen. Returns the cursor for the next page.
 */
export function* listEvents(
  filter: EventFilter,
  limit: number,
  after: number | undefined,
): Op<{ events: EventView[]; next: number | null }> {
  const rows =
    filter.aggregate !== undefined
      ? yield* all<EventRow>(
          `SELECT ${COLUMNS} FROM events WHERE aggregate = :aggregate AND sequence > :after
             AND (:type IS NULL OR type = :type) ORDER BY sequence LIMIT :limit`,
          { aggregate: filter.aggregate, type: filter.type ?? null, after: after ?? 0, limit },
        )
      : yield* all<EventRow>(
          `SELECT ${COLUMNS} FROM events WHERE (:type IS NULL OR type = :type) AND (:after IS NULL OR pos < :after)
             ORDER BY pos DESC LIMIT :limit`,
          { type: filter.type ?? null, after: after ?? null, limit },
        );
  const events: EventView[] = [];
  for (const row of rows) {
    events.push({ ...view(row), deliveries: (yield* deliveriesOfEvent(row.id)).map(deliveryInEvent) });
  }
  const last = rows.at(-1);
  const next =
    rows.length < limit || !last ? null : filter.aggregate !== undefined ? last.sequence : last.pos;
  return { events, next };
}

export function* getEvent(id: string): Op<EventView | undefined> {
  const row = yield* get<EventRow>(`SELECT ${COLUMNS} FROM events WHERE id = :id`, { id: id.toLowerCase() });
  if (!row) return undefined;
  return { ...view(row), deliveries: (yield* deliveriesOfEvent(row.id)).map(deliveryInEvent) };
}
