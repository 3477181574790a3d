// The dispatcher's named writes (db/writer-ops.ts): made from plain data wherever the writer runs.
// What the dispatcher knows in memory (the room its slots have, its lease tokens, the time) is
// read when the write is queued and passed in, never read while the write runs.
import type { Op } from "../db/op.ts";
import { defineWrite } from "../db/writer-ops.ts";
import {
  type ClaimedDelivery,
  claimDeliveries,
  claimDeliveriesById,
  releaseLeases,
} from "../deliveries/claim.ts";
import {
  type AttemptRecord,
  type Completion,
  type CompletionItem,
  completeDeliveries,
} from "../deliveries/complete.ts";
import type { PromotedHead } from "../deliveries/heads.ts";
import { Hints } from "./hints.ts";
import { type EndpointToSend, type EventToSend, loadSendContext, type SendContext } from "./send-context.ts";
import type { ClaimRoom } from "./slots.ts";

/** A claim of the heads a batch of outcomes promotes, in its transaction: its lease and the room for it. */
export interface ClaimAlong {
  owner: string;
  now: number;
  leaseMs: number;
  room: ClaimRoom;
}

/** A batch of outcomes' answer, with the heads it claimed (see completeAndClaim). */
export interface ClaimedWithBatch {
  /** Per item, whether the fence let it through (CompletedBatch.recorded). */
  recorded: boolean[];
  claimed: { owner: string; claimedAt: number; rows: ClaimedDelivery[]; context: SendContext } | null;
  /** Promoted heads not claimed there: hints. */
  unclaimed: PromotedHead[];
}

/**
 * A batch of outcomes as one writer operation, and (with `along`: on a local file, while the
 * dispatcher runs) in the same transaction a claim of the heads it promoted that fit the room,
 * with their events: no claim of their own. The promotion leases every head it makes that a
 * claim could take now (heads.ts promoteAndLease: each row written once); those beyond the room
 * get their lease back here, in the same transaction.
 */
function* completeAndClaim(items: CompletionItem[], along: ClaimAlong | null): Op<ClaimedWithBatch> {
  const lease = along && { owner: along.owner, now: along.now, leaseMs: along.leaseMs };
  const { recorded, promoted, leased } = yield* completeDeliveries(items, lease);
  if (!along || leased.length === 0) return { recorded, claimed: null, unclaimed: promoted.map(headOf) };
  const fit = new Hints();
  fit.offer(leased);
  // Within the claim window, as any claim: what does not fit is left to hints and to other
  // dispatchers (a queue's next head claimed with its predecessor's outcome stays with this
  // dispatcher, so a wider window here would keep every queue from the others).
  const taken = new Set(fit.take(along.room, along.now).ids);
  const rows = leased.filter((head) => taken.has(head.id));
  const over = leased.filter((head) => !taken.has(head.id));
  const { owner, now } = along;
  if (over.length > 0) yield* releaseLeases(over.map(({ id }) => ({ id, owner })));
  const unclaimed = promoted.filter((head) => !taken.has(head.id)).map(headOf);
  if (rows.length === 0) return { recorded, claimed: null, unclaimed };
  const context = yield* sendContextOf(rows);
  return { recorded, claimed: { owner, claimedAt: now, rows, context }, unclaimed };
}

/** A promoted head as a hint (what the dispatcher keeps of it). */
function headOf({ rid, id, endpointId }: PromotedHead): PromotedHead {
  return { rid, id, endpointId };
}

/** What the sends of these claimed deliveries need (and the kind of `alsoEndpoints`). */
export function sendContextOf(claimed: ClaimedDelivery[], alsoEndpoints: string[] = []): Op<SendContext> {
  return loadSendContext(
    [...new Set(claimed.map((d) => d.eventId))],
    [...new Set([...claimed.map((d) => d.endpointId), ...alsoEndpoints])],
  );
}

// All re-runnable: the remote write path may run them again (remote-writer.ts). All plain: their
// arguments and answers are JSON data, so they cross to and from the writer thread as JSON text,
// which costs both threads less than a structured clone of the same objects (writer-thread.ts).
const DISPATCH = { again: true, plain: true };
const completeAndClaimPacked = defineWrite(
  "dispatch.completeAndClaim",
  (items: PackedItem[], along: ClaimAlong | null) => completeAndClaim(items.map(unpackItem), along),
  { ...DISPATCH, answer: { pack: packAnswer, unpack: unpackAnswer } },
);
/** completeAndClaim as a named write: its items cross to the writer thread as arrays (PackedItem). */
export const completeAndClaimWrite = (items: CompletionItem[], along: ClaimAlong | null) =>
  completeAndClaimPacked(items.map(packItem), along);

/**
 * An outcome as it crosses to the writer thread: an array by position instead of two objects with
 * their keys, so the JSON text each thread writes and reads is less than half as long (the
 * crossing cost ~11 us per delivery over both threads; session 10). `kind`'s value: latencyMs
 * (delivered), nextAttemptAt (retry), reason (dead), null (gone).
 */
type PackedItem = [
  deliveryId: string,
  owner: string,
  endpointId: string,
  startedAt: number,
  durationMs: number,
  statusCode: number | null,
  error: string | null,
  responsePrefix: string | null,
  rid: number | null,
  aggregate: string | null,
  sequence: number | null,
  kind: Completion["kind"],
  at: number,
  value: number | string | null,
];

function packItem({ attempt: a, completion: c }: CompletionItem): PackedItem {
  const value =
    c.kind === "delivered"
      ? c.latencyMs
      : c.kind === "retry"
        ? c.nextAttemptAt
        : c.kind === "dead"
          ? c.reason
          : null;
  const sent = a.sent;
  return [
    a.deliveryId,
    a.owner,
    a.endpointId,
    a.startedAt,
    a.durationMs,
    a.statusCode,
    a.error,
    a.responsePrefix,
    sent?.rid ?? null,
    sent ? sent.aggregate : null,
    sent ? sent.sequence : null,
    c.kind,
    c.at,
    value,
  ];
}

function unpackItem(p: PackedItem): CompletionItem {
  const [deliveryId, owner, endpointId, startedAt, durationMs, statusCode, error, responsePrefix] = p;
  const [, , , , , , , , rid, aggregate, sequence, kind, at, value] = p;
  const attempt: AttemptRecord = {
    deliveryId,
    owner,
    endpointId,
    startedAt,
    durationMs,
    statusCode,
    error,
    responsePrefix,
  };
  if (aggregate !== null && sequence !== null) attempt.sent = { rid: rid ?? undefined, aggregate, sequence };
  const completion: Completion =
    kind === "delivered"
      ? { kind, at, latencyMs: value as number }
      : kind === "retry"
        ? { kind, at, nextAttemptAt: value as number }
        : kind === "dead"
          ? { kind, at, reason: value as "deadline_exceeded" }
          : { kind, at };
  return { attempt, completion };
}

/**
 * completeAndClaim's answer as it crosses back from the writer thread: its claimed rows and their
 * events as arrays by position, each row naming its event and endpoint by their place in the
 * context's lists instead of repeating their ids, queue and sequence. The JSON text both threads
 * write and read is less than half as long, with a third of the string values (the dispatcher's
 * thread parsed ~454 B per delivery, 7-8.5% of its time; issue 12, session 11). A row whose event
 * or endpoint is not in its context (none should be), or that has no rowid, sends the answer as it is.
 */
type PackedAnswer =
  | [form: 0, answer: ClaimedWithBatch]
  | [
      form: 1,
      recorded: (0 | 1)[],
      claimed:
        | [
            owner: string,
            claimedAt: number,
            rows: PackedRow[],
            events: PackedEvent[],
            endpoints: EndpointToSend[],
          ]
        | null,
      unclaimed: (number | string)[],
    ];

/** A claimed row: rid, id, its event's and endpoint's places in the context, then its own columns. */
type PackedRow = [number, string, number, number, number, number, number];
type PackedEvent = [string, string, string, number, string, number, string | null];

function packAnswer({ recorded, claimed, unclaimed }: ClaimedWithBatch): PackedAnswer {
  let rows: PackedRow[] | null = null;
  let events: PackedEvent[] = [];
  if (claimed) {
    const { context } = claimed;
    const eventAt = new Map<string, number>();
    events = [];
    for (const e of context.events) {
      eventAt.set(e.id, events.length);
      events.push([e.id, e.type, e.aggregate, e.sequence, e.payload, e.occurredAt, e.traceparent]);
    }
    const endpointAt = new Map<string, number>();
    for (let i = 0; i < context.endpoints.length; i++)
      endpointAt.set((context.endpoints[i] as EndpointToSend).id, i);
    rows = [];
    for (const d of claimed.rows) {
      const event = eventAt.get(d.eventId);
      const endpoint = endpointAt.get(d.endpointId);
      const e = event === undefined ? undefined : context.events[event];
      if (
        d.rid === undefined ||
        event === undefined ||
        endpoint === undefined ||
        e?.aggregate !== d.aggregate ||
        e.sequence !== d.sequence
      )
        return [0, { recorded, claimed, unclaimed }];
      rows.push([d.rid, d.id, event, endpoint, d.attemptCount, d.availableAt, d.deliverBy]);
    }
  }
  const flags: (0 | 1)[] = [];
  for (const r of recorded) flags.push(r ? 1 : 0);
  const heads: (number | string)[] = [];
  for (const h of unclaimed) heads.push(h.rid, h.id, h.endpointId);
  return [
    1,
    flags,
    claimed && rows ? [claimed.owner, claimed.claimedAt, rows, events, claimed.context.endpoints] : null,
    heads,
  ];
}

function unpackAnswer(packed: unknown): ClaimedWithBatch {
  const answer = packed as PackedAnswer;
  if (answer[0] === 0) return answer[1];
  const [, flags, packedClaim, heads] = answer;
  const recorded: boolean[] = [];
  for (const r of flags) recorded.push(r === 1);
  const unclaimed: PromotedHead[] = [];
  for (let i = 0; i < heads.length; i += 3)
    unclaimed.push({
      rid: heads[i] as number,
      id: heads[i + 1] as string,
      endpointId: heads[i + 2] as string,
    });
  if (packedClaim === null) return { recorded, claimed: null, unclaimed };
  const [owner, claimedAt, packedRows, packedEvents, endpoints] = packedClaim;
  // In the key order of a claim's own rows and reads (claim.ts CLAIMED_COLUMNS, send-context.ts):
  // one object shape for every claimed row, whichever way it came.
  const events: EventToSend[] = [];
  for (const [id, type, aggregate, sequence, payload, occurredAt, traceparent] of packedEvents)
    events.push({ id, type, aggregate, sequence, payload, occurredAt, traceparent });
  const rows: ClaimedDelivery[] = [];
  for (const [rid, id, event, endpoint, attemptCount, availableAt, deliverBy] of packedRows) {
    const e = events[event] as EventToSend;
    rows.push({
      rid,
      id,
      eventId: e.id,
      endpointId: (endpoints[endpoint] as EndpointToSend).id,
      aggregate: e.aggregate,
      sequence: e.sequence,
      attemptCount,
      availableAt,
      deliverBy,
    });
  }
  return { recorded, claimed: { owner, claimedAt, rows, context: { events, endpoints } }, unclaimed };
}

/** completeAndClaim's answer codec (exported for its test). */
export const completeAndClaimAnswer = { pack: packAnswer, unpack: unpackAnswer };

export const claimByIdWrite = defineWrite("dispatch.claimById", claimDeliveriesById, DISPATCH);
export const claimScanWrite = defineWrite("dispatch.claimScan", claimDeliveries, DISPATCH);
export const releaseLeasesWrite = defineWrite("dispatch.releaseLeases", releaseLeases, DISPATCH);
