// The schemas /openapi.json names in components.schemas. Wherever one of these schema objects
// appears (by identity) inside a route's request or answer, the document holds a $ref to it.
// Add a schema here when several routes share it or readers should find it by name; any other
// schema is written inline where it is used.
import type * as v from "valibot";
import { CommitSchema, Duration, EventSchema, RecordWriteSchema, Timestamp } from "../../commit/schemas.ts";
import {
  AttemptAnswer,
  CommitResponse,
  CommittedEvent,
  DeliveryAnswer,
  DeliveryInEvent,
  EndpointAnswer,
  EventAnswer,
  ProblemAnswer,
  ProposalAnswer,
  RecordAnswer,
  TokenAnswer,
} from "../responses.ts";
import {
  EndpointCreateSchema,
  EndpointPatchSchema,
  EventTypePutSchema,
  ProposalCreateSchema,
  ProposalDecisionSchema,
  PutRecordSchema,
  ReplayManySchema,
  ReplayOneSchema,
  TokenCreateSchema,
} from "../schemas.ts";

export const NAMED_SCHEMAS = {
  // Requests: the very schemas that validate them (a commit's live with the write side, src/commit).
  CommitRequest: CommitSchema,
  PutRecordRequest: PutRecordSchema,
  RecordWrite: RecordWriteSchema,
  Event: EventSchema,
  EndpointCreateRequest: EndpointCreateSchema,
  EndpointPatchRequest: EndpointPatchSchema,
  TokenCreateRequest: TokenCreateSchema,
  ReplayRequest: ReplayOneSchema,
  ReplayManyRequest: ReplayManySchema,
  Timestamp,
  Duration,
  // Answers.
  Problem: ProblemAnswer,
  CommitResponse,
  CommittedEvent,
  Record: RecordAnswer,
  Endpoint: EndpointAnswer,
  EventResponse: EventAnswer,
  DeliveryInEvent,
  Delivery: DeliveryAnswer,
  Attempt: AttemptAnswer,
  Token: TokenAnswer,
  Proposal: ProposalAnswer,
  ProposalCreateRequest: ProposalCreateSchema,
  ProposalDecisionRequest: ProposalDecisionSchema,
  EventTypePutRequest: EventTypePutSchema,
} satisfies Record<string, v.GenericSchema>;
