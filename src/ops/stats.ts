// GET /v1/stats (DESIGN §3): the state of the outbox. Every query reads a partial index over
// pending rows or a range of a time index, so the cost follows the backlog, not the history.
import { all, get, type Op } from "../db/op.ts";
import { claimableByEndpoint } from "../deliveries/claim.ts";
import { DEADLINE_EXCEEDED_COUNTER, minuteOf } from "../deliveries/counters.ts";

export interface DeliveryStats {
  pending: number;
  inFlight: number;
  due: number;
  oldestPendingAgeSeconds: number;
  dead: number;
  deadlineExceededTotal: number;
  deliveredLastHour: number;
}

export interface Stats extends DeliveryStats {
  /** `kind`: "webhook" or "pull" (DESIGN §12); null for an endpoint deleted since. */
  endpoints: ({ id: string; kind: "webhook" | "pull" | null } & DeliveryStats)[];
}

interface GroupRow {
  endpointId: string;
  pending: number;
  inFlight: number;
  oldestAvailableAt: number | null;
}

export function* stats(now: number): Op<Stats> {
  const pendingRows = yield* all<GroupRow>(
    `SELECT endpoint_id AS endpointId, count(*) AS pending,
       sum(lease_expires_at > :now) AS inFlight,
       min(CASE WHEN available_at <= :now THEN available_at END) AS oldestAvailableAt
     FROM deliveries WHERE status = 'pending' GROUP BY endpoint_id`,
    { now },
  );
  // Exactly what a claim could take now: the claim's own predicate (src/deliveries/claim.ts).
  const dueRows = yield* claimableByEndpoint(now);
  const deadRows = yield* all<{ endpointId: string; n: number }>(
    "SELECT endpoint_id AS endpointId, count(*) AS n FROM deliveries WHERE status = 'dead' GROUP BY endpoint_id",
  );
  const deadlineRows = yield* all<{ endpointId: string; n: number }>(
    `SELECT endpoint_id AS endpointId, count(*) AS n FROM deliveries
     WHERE status = 'dead' AND dead_reason = 'deadline_exceeded' GROUP BY endpoint_id`,
  );
  // Minute buckets (delivered_minutes): the hour's volume costs at most 61 rows per endpoint.
  const deliveredRows = yield* all<{ endpointId: string; n: number }>(
    `SELECT endpoint_id AS endpointId, sum(count) AS n FROM delivered_minutes
     WHERE minute >= :since GROUP BY endpoint_id`,
    { since: minuteOf(now - 3_600_000) },
  );
  const endpointRows = yield* all<{ id: string; kind: "webhook" | "pull" }>(
    "SELECT id, kind FROM endpoints ORDER BY id DESC",
  );
  const total = yield* get<{ value: number }>("SELECT value FROM counters WHERE name = :name", {
    name: DEADLINE_EXCEEDED_COUNTER,
  });

  const byId = <T extends { endpointId: string }>(rows: T[]) => new Map(rows.map((r) => [r.endpointId, r]));
  const pending = byId(pendingRows);
  const due = byId(dueRows);
  const dead = byId(deadRows);
  const deadline = byId(deadlineRows);
  const delivered = byId(deliveredRows);
  const kinds = new Map(endpointRows.map((e) => [e.id, e.kind]));
  const ids = new Set([
    ...endpointRows.map((e) => e.id),
    ...pending.keys(),
    ...dead.keys(),
    ...delivered.keys(),
  ]);
  const endpoints = [...ids].map((id) => {
    const p = pending.get(id);
    return {
      id,
      kind: kinds.get(id) ?? null,
      pending: p?.pending ?? 0,
      inFlight: p?.inFlight ?? 0,
      due: due.get(id)?.n ?? 0,
      oldestPendingAgeSeconds: ageSeconds(now, p?.oldestAvailableAt ?? null),
      dead: dead.get(id)?.n ?? 0,
      // Per endpoint: those dead for their deadline now; the global total also counts replayed ones.
      deadlineExceededTotal: deadline.get(id)?.n ?? 0,
      deliveredLastHour: delivered.get(id)?.n ?? 0,
    };
  });
  const sum = (pick: (e: (typeof endpoints)[number]) => number) => endpoints.reduce((n, e) => n + pick(e), 0);
  const oldest = pendingRows.reduce<number | null>(
    (min, r) =>
      r.oldestAvailableAt !== null && (min === null || r.oldestAvailableAt < min) ? r.oldestAvailableAt : min,
    null,
  );
  return {
    pending: sum((e) => e.pending),
    inFlight: sum((e) => e.inFlight),
    due: sum((e) => e.due),
    oldestPendingAgeSeconds: ageSeconds(now, oldest),
    dead: sum((e) => e.dead),
    deadlineExceededTotal: total?.value ?? 0,
    deliveredLastHour: sum((e) => e.deliveredLastHour),
    endpoints,
  };
}

function ageSeconds(now: number, since: number | null): number {
  return since === null ? 0 : Math.max(0, (now - since) / 1000);
}
