// The MCP tools of DESIGN §11: each one is a call of the HTTP API, so an agent gets exactly the
// validation, scopes, guarantees and answers of any other client. Input schemas are built from
// the valibot schemas that validate the API's requests. There is no approve tool, on purpose:
// approval is a person's act.
import * as v from "valibot";
import type { Scope } from "../auth/tokens.ts";
import { Aggregate, CommitSchema, EventType, Name, ProposalCreateSchema } from "../http/schemas.ts";
import { IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE } from "../lib/idempotency.ts";
import type { FieldError } from "../lib/problem.ts";

/** One HTTP request a tool makes. */
export interface ApiRequest {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Tool<S extends v.GenericSchema = v.GenericSchema> {
  name: string;
  description: string;
  /** The tool is listed (and callable) for a token holding one of these (admin holds all). */
  scopes: readonly Scope[];
  input: S;
  /** The agent rails beyond the schema: violations refuse the call before any request. */
  rails?: (input: v.InferOutput<S>) => FieldError[];
  request: (input: v.InferOutput<S>) => ApiRequest;
  /** A short text for the agent next to the structured answer. */
  summary: (answer: Record<string, unknown>) => string;
}

const IdempotencyKey = v.pipe(
  v.string(),
  v.regex(IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE),
  v.description(
    "Required: a retry with the same key and input returns the first answer instead of writing twice.",
  ),
);
const Limit = v.pipe(
  v.number(),
  v.integer("must be an integer"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(500, "must be at most 500"),
);
const Cursor = v.pipe(v.string(), v.description("The `next` cursor of the previous page."));
const Id = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.maxLength(255, "must be at most 255 characters"),
);

const CommitInput = v.strictObject({ ...CommitSchema.entries, idempotencyKey: IdempotencyKey });
const ProposeInput = v.strictObject({ ...ProposalCreateSchema.entries, idempotencyKey: IdempotencyKey });

/** Every record write of an agent names the version it read (DESIGN §11 rails). */
function expectedVersions(
  records: { expectedVersion?: number | null | undefined }[] | null | undefined,
  at: string,
) {
  return (records ?? []).flatMap((record, i) =>
    record.expectedVersion == null
      ? [
          {
            pointer: `${at}/${i}/expectedVersion`,
            detail:
              "is required for an agent: read the record and name the version you changed (0 = must not exist yet)",
          },
        ]
      : [],
  );
}

const query = (params: Record<string, string | number | null | undefined>) => {
  const search = new URLSearchParams();
  for (const [k, value] of Object.entries(params)) if (value != null) search.set(k, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
};
const path = (...parts: string[]) => parts.map(encodeURIComponent).join("/");
const listed = (answer: Record<string, unknown>, what: string) => {
  const data = answer.data as unknown[] | undefined;
  return `${data?.length ?? 0} ${what}${answer.next ? `; more with after=${String(answer.next)}` : ""}`;
};

const READ_RECORDS = ["read", "commit", "propose", "approve"] as const;

function tool<S extends v.GenericSchema>(definition: Tool<S>): Tool {
  return definition as unknown as Tool;
}

export const TOOLS: readonly Tool[] = [
  tool({
    name: "get_record",
    description: "Read one business record (its data and version) by collection and id.",
    scopes: READ_RECORDS,
    input: v.strictObject({ collection: Name, id: Name }),
    request: (i) => ({ method: "GET", path: `/v1/records/${path(i.collection, i.id)}` }),
    summary: (a) => `${String(a.collection)}/${String(a.id)} at version ${String(a.version)}`,
  }),
  tool({
    name: "list_records",
    description: "List the records of a collection, ordered by id.",
    scopes: READ_RECORDS,
    input: v.strictObject({ collection: Name, limit: v.optional(Limit), after: v.optional(Cursor) }),
    request: (i) => ({
      method: "GET",
      path: `/v1/records/${path(i.collection)}${query({ limit: i.limit, after: i.after })}`,
    }),
    summary: (a) => listed(a, "records"),
  }),
  tool({
    name: "commit",
    description:
      "Change records and announce the change with events, atomically (a POST /v1/commits body). Every record " +
      "write must carry expectedVersion; idempotencyKey is required so that a retry never writes twice.",
    scopes: ["commit"],
    input: CommitInput,
    rails: (i) => expectedVersions(i.records, "/records"),
    request: ({ idempotencyKey, ...body }) => ({
      method: "POST",
      path: "/v1/commits",
      body,
      headers: { "idempotency-key": idempotencyKey },
    }),
    summary: (a) => `committed ${String(a.commitId)}`,
  }),
  tool({
    name: "propose_commit",
    description:
      "Propose a commit for a person to approve; nothing changes until they do. Every record write must carry " +
      "expectedVersion; idempotencyKey is required. Check the outcome later with get_proposal.",
    scopes: ["propose"],
    input: ProposeInput,
    rails: (i) => expectedVersions(i.commit.records, "/commit/records"),
    request: ({ idempotencyKey, ...body }) => ({
      method: "POST",
      path: "/v1/proposals",
      body,
      headers: { "idempotency-key": idempotencyKey },
    }),
    summary: (a) => `proposal ${String(a.id)} is ${String(a.status)} until ${String(a.expiresAt)}`,
  }),
  tool({
    name: "get_proposal",
    description:
      "Read a proposal: its status (pending, approved, rejected, conflicted, expired), the decision and result.",
    scopes: ["propose", "approve", "read"],
    input: v.strictObject({ id: Id }),
    request: (i) => ({ method: "GET", path: `/v1/proposals/${path(i.id)}` }),
    summary: (a) => `proposal ${String(a.id)} is ${String(a.status)}`,
  }),
  tool({
    name: "list_events",
    description: "List committed events, newest first, or one aggregate's in sequence order.",
    scopes: ["read"],
    input: v.strictObject({
      aggregate: v.optional(Aggregate),
      type: v.optional(EventType),
      limit: v.optional(Limit),
      after: v.optional(Cursor),
    }),
    request: (i) => ({ method: "GET", path: `/v1/events${query(i)}` }),
    summary: (a) => listed(a, "events"),
  }),
  tool({
    name: "get_event",
    description:
      "Read an event with its deliveries: whether each endpoint has it (delivered), still waits, or gave up (dead).",
    scopes: ["read"],
    input: v.strictObject({ id: Id }),
    request: (i) => ({ method: "GET", path: `/v1/events/${path(i.id)}` }),
    summary: (a) => {
      const deliveries = (a.deliveries as { status: string }[] | undefined) ?? [];
      const by = (s: string) => deliveries.filter((d) => d.status === s).length;
      return `${String(a.type)} #${String(a.sequence)}: ${by("delivered")} delivered, ${by("pending")} pending, ${by("dead")} dead`;
    },
  }),
  tool({
    name: "get_stats",
    description: "The outbox's state: pending, in flight, due, dead deliveries, the oldest pending age.",
    scopes: ["read"],
    input: v.strictObject({}),
    request: () => ({ method: "GET", path: "/v1/stats" }),
    summary: (a) => `${String(a.pending)} pending, ${String(a.dead)} dead`,
  }),
  tool({
    name: "list_endpoints",
    description:
      "List endpoints with their health and controls (rateLimit, retrySchedule, disableAfter, filter; " +
      "whether disabled, why and since when), newest first. No secrets.",
    scopes: ["read"],
    input: v.strictObject({ limit: v.optional(Limit), after: v.optional(Cursor) }),
    request: (i) => ({ method: "GET", path: `/v1/endpoints${query(i)}` }),
    summary: (a) => listed(a, "endpoints"),
  }),
  tool({
    name: "get_endpoint",
    description:
      "Read an endpoint: its health (lastSuccessAt, lastFailureAt, failingSince, pending, dead), its controls, " +
      "and when disabled why (operator, gone, failing) and since when.",
    scopes: ["read"],
    input: v.strictObject({ id: Id }),
    request: (i) => ({ method: "GET", path: `/v1/endpoints/${path(i.id)}` }),
    summary: (a) =>
      a.disabled
        ? `endpoint ${String(a.id)} is disabled (${String(a.disabledReason)}) since ${String(a.disabledAt)}`
        : `endpoint ${String(a.id)} is enabled: ${String(a.pending)} pending, ${String(a.dead)} dead`,
  }),
  tool({
    name: "list_dead_letters",
    description: "List dead deliveries (the dead-letter queue), newest first.",
    scopes: ["read"],
    input: v.strictObject({ endpoint: v.optional(Id), limit: v.optional(Limit), after: v.optional(Cursor) }),
    request: (i) => ({ method: "GET", path: `/v1/deliveries${query({ status: "dead", ...i })}` }),
    summary: (a) => listed(a, "dead letters"),
  }),
  tool({
    name: "replay_delivery",
    description: "Put a dead delivery back to pending with a new deadline.",
    scopes: ["admin"],
    input: v.strictObject({ id: Id }),
    request: (i) => ({ method: "POST", path: `/v1/deliveries/${path(i.id)}/replay` }),
    summary: (a) => `delivery ${String(a.id)} is ${String(a.status)}`,
  }),
];
