// Turns a schema-valid commit body into the CommitInput the commit operation stores, applying
// the rules that span fields (DESIGN §3): limits, defaults, deadlines, the aggregate default.
// Every violation is collected so the client sees all of them at once.
import type * as v from "valibot";
import type { Config } from "../config.ts";
import { type Deadline, deadlineWithin, storableDeadline } from "../deliveries/deadline.ts";
import { isReservedAggregate, isReservedType } from "../event-types/builtin.ts";
import { dataDigest, payloadDigest } from "../ledger/append.ts";
import { type FieldError, problems } from "../lib/problem.ts";
import type { CommitInput, Committer, EventWrite, RecordWrite } from "./commit-op.ts";
import type { CommitSchema, EventSchema } from "./schemas.ts";

export type CommitBody = v.InferOutput<typeof CommitSchema>;
type EventBody = v.InferOutput<typeof EventSchema>;

export type Limits = Pick<
  Config,
  | "maxRecordsPerCommit"
  | "maxEventsPerCommit"
  | "maxDocumentBytes"
  | "defaultDeliverWithinMs"
  | "maxDeliveriesPerCommit"
  | "maxDeliverAfterMs"
>;

export interface CommitContext {
  by: Committer;
  now: number;
  limits: Limits;
  idempotency: CommitInput["idempotency"];
  traceparent: string | undefined;
  conflictStatus: 409 | 412;
}

export function normalizeCommit(body: CommitBody, ctx: CommitContext): CommitInput {
  const errors: FieldError[] = [];
  const recordsIn = body.records ?? [];
  const eventsIn = body.events ?? [];
  const { limits } = ctx;

  if (recordsIn.length === 0 && eventsIn.length === 0) {
    errors.push({ pointer: "", detail: "a commit needs at least one record or event" });
  }
  if (recordsIn.length > limits.maxRecordsPerCommit) {
    errors.push({ pointer: "/records", detail: `at most ${limits.maxRecordsPerCommit} records per commit` });
  }
  if (eventsIn.length > limits.maxEventsPerCommit) {
    errors.push({ pointer: "/events", detail: `at most ${limits.maxEventsPerCommit} events per commit` });
  }

  const seen = new Set<string>();
  const records: RecordWrite[] = recordsIn.map((record, i) => {
    const at = `/records/${i}`;
    const key = `${record.collection}/${record.id}`;
    if (seen.has(key)) errors.push({ pointer: at, detail: "appears more than once in this commit" });
    seen.add(key);
    let data: string | null = null;
    if (record.delete) {
      if (record.data != null) errors.push({ pointer: `${at}/data`, detail: "a delete carries no data" });
    } else if (record.data == null) {
      errors.push({ pointer: `${at}/data`, detail: "required unless delete is true" });
    } else {
      data = JSON.stringify(record.data);
      checkSize(data, `${at}/data`, limits, errors);
    }
    return {
      collection: record.collection,
      id: record.id,
      expectedVersion: record.expectedVersion ?? undefined,
      data,
      // Here, from the parsed document, not on the writer (commit-op.ts RecordWrite.dataDigest);
      // a commit refused already (a document too large, say) hashes nothing more.
      dataDigest: data === null || errors.length > 0 ? null : dataDigest(data, record.data),
    };
  });

  const onlyRecord = recordsIn.length === 1 ? `${recordsIn[0]?.collection}/${recordsIn[0]?.id}` : undefined;
  const eventIds = new Set<string>();
  const events: EventWrite[] = eventsIn.map((event, i) => {
    const at = `/events/${i}`;
    const aggregate = event.aggregate ?? onlyRecord;
    if (aggregate === undefined) {
      errors.push({
        pointer: `${at}/aggregate`,
        detail: "required when the commit does not have exactly one record",
      });
    } else if (isReservedAggregate(aggregate)) {
      // DESIGN §9 reserved names: outboxd's own aggregates; a record's default one counts too.
      errors.push({ pointer: `${at}/aggregate`, detail: "must not start with outboxd/ (reserved)" });
    }
    if (isReservedType(event.type)) {
      errors.push({ pointer: `${at}/type`, detail: "must not start with outboxd. (reserved)" });
    }
    if (event.id != null) {
      const id = event.id.toLowerCase();
      if (eventIds.has(id))
        errors.push({ pointer: `${at}/id`, detail: "appears more than once in this commit" });
      eventIds.add(id);
    }
    const payloadValue = event.payload ?? {};
    const payload = JSON.stringify(payloadValue);
    checkSize(payload, `${at}/payload`, limits, errors);
    const endpoints = event.endpoints ?? undefined;
    if (endpoints && new Set(endpoints).size !== endpoints.length) {
      errors.push({ pointer: `${at}/endpoints`, detail: "lists an endpoint more than once" });
    }
    return {
      id: event.id?.toLowerCase() ?? undefined,
      type: event.type,
      aggregate: aggregate ?? "",
      payload,
      payloadDigest: errors.length > 0 ? null : payloadDigest(payload, payloadValue),
      ...schedule(event, at, ctx.now, limits, errors),
      endpoints,
    };
  });

  if (errors.length > 0) throw problems.invalid(errors);
  return {
    by: ctx.by,
    records,
    events,
    idempotency: ctx.idempotency,
    traceparent: ctx.traceparent,
    conflictStatus: ctx.conflictStatus,
    maxDeliveries: limits.maxDeliveriesPerCommit,
    now: ctx.now,
  };
}

/** deliverAfter and the deadline: the window starts at the later of the commit and deliverAfter. */
function schedule(event: EventBody, at: string, now: number, limits: Limits, errors: FieldError[]) {
  const deliverAfter = event.deliverAfter != null ? Date.parse(event.deliverAfter) : null;
  if (deliverAfter !== null && deliverAfter > now + limits.maxDeliverAfterMs) {
    // A far-off deliverAfter holds back every later event of its aggregate until then.
    errors.push({
      pointer: `${at}/deliverAfter`,
      detail: "is further ahead than OUTBOXD_MAX_DELIVER_AFTER allows",
    });
  }
  const start = Math.max(now, deliverAfter ?? now);
  let deadline: Deadline = storableDeadline(start + limits.defaultDeliverWithinMs);
  let pointer = `${at}/deliverBy`;
  if (event.deliverBy != null && event.deliverWithin != null) {
    errors.push({ pointer: `${at}/deliverWithin`, detail: "give deliverBy or deliverWithin, not both" });
  } else if (event.deliverBy != null) {
    const deliverBy = Date.parse(event.deliverBy);
    if (deliverBy <= now) errors.push({ pointer, detail: "is in the past" });
    else if (deliverBy <= start) errors.push({ pointer, detail: "is not after deliverAfter" });
    deadline = storableDeadline(deliverBy);
  } else if (event.deliverWithin != null) {
    pointer = `${at}/deliverWithin`;
    deadline = deadlineWithin(start, event.deliverWithin);
  }
  if (!deadline.ok) errors.push({ pointer, detail: deadline.detail });
  return { deliverAfter, deliverBy: deadline.ok ? deadline.deliverBy : start };
}

function checkSize(json: string, pointer: string, limits: Limits, errors: FieldError[]): void {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most documents need no count.
  if (json.length * 3 <= limits.maxDocumentBytes) return;
  const bytes = Buffer.byteLength(json);
  if (bytes > limits.maxDocumentBytes) {
    errors.push({ pointer, detail: `is ${bytes} bytes of JSON; the limit is ${limits.maxDocumentBytes}` });
  }
}
