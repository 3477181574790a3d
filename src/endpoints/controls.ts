// Endpoint controls (DESIGN §19): what each one accepts, and the payload filter's evaluation.
// The HTTP API, the CLI and MCP validate with these schemas and rules; the commit's fan-out
// (src/commit/commit-op.ts) runs compiled filters; the dispatcher reads rateLimit,
// retrySchedule and disableAfter (src/dispatch).
import * as v from "valibot";
import { parseDuration } from "../lib/duration.ts";
import type { FieldError } from "../lib/problem.ts";

export interface RateLimit {
  perSecond: number;
  burst: number;
}

export const FILTER_OPS = ["eq", "ne", "in", "exists", "prefix", "gt", "lt"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export interface Condition {
  path: string;
  op: FilterOp;
  value: unknown;
}

/** New endpoints' disableAfter; endpoints from before the controls have "never". */
export const DEFAULT_DISABLE_AFTER = "5d";
export const NEVER = "never";
export const MIN_DISABLE_AFTER_MS = 3_600_000;
/** The shortest disableAfter with OUTBOXD_ALLOW_FAILPOINTS=1 (tests). */
export const TEST_MIN_DISABLE_AFTER_MS = 1000;
/** Failures since failingSince that disabling needs, besides the time. */
export const DISABLE_MIN_FAILURES = 10;

export const MAX_CONDITIONS = 20;
export const MAX_IN_VALUES = 100;
export const MAX_VALUE_BYTES = 1024;

const DURATION = /^\d+(ms|s|m|h|d)$/;
const wholeBetween = (min: number, max: number) =>
  v.pipe(
    v.number(),
    v.integer("must be a whole number"),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

export const RateLimitSchema = v.strictObject({
  perSecond: wholeBetween(1, 10_000),
  burst: v.nullish(wholeBetween(1, 10_000)),
});

const RetryWait = v.pipe(
  v.string(),
  v.regex(DURATION, "must be a duration like 5s, 2m or 1h"),
  v.check((text) => {
    const ms = parseDuration(text);
    return ms !== null && ms >= 1000 && ms <= 86_400_000;
  }, "must be between 1s and 24h"),
);

export const RetryScheduleSchema = v.pipe(
  v.array(RetryWait),
  v.minLength(1, "must list at least one wait"),
  v.maxLength(20, "must list at most 20 waits"),
);

/** Its form; the shortest allowed depends on the configuration (disableAfterError). */
export const DisableAfterSchema = v.pipe(
  v.string(),
  v.regex(/^(never|\d+(ms|s|m|h|d))$/, 'must be a duration like 5d or 12h, or "never"'),
);

const JSON_POINTER = /^(\/([^~]|~[01])*)*$/;

export const ConditionSchema = v.strictObject({
  path: v.pipe(
    v.string(),
    v.maxLength(512, "must be at most 512 characters"),
    v.regex(JSON_POINTER, "must be a JSON pointer into the webhook body, like /data/status"),
  ),
  op: v.picklist(FILTER_OPS, `must be one of ${FILTER_OPS.join(", ")}`),
  value: v.unknown(),
});

export const FilterSchema = v.pipe(
  v.array(ConditionSchema),
  v.maxLength(MAX_CONDITIONS, `must hold at most ${MAX_CONDITIONS} conditions`),
);

/** Whether `text` is a disableAfter this process accepts: the pointer's error, or null. */
export function disableAfterError(text: string, allowFailpoints: boolean): string | null {
  if (text === NEVER) return null;
  const ms = parseDuration(text);
  const min = allowFailpoints ? TEST_MIN_DISABLE_AFTER_MS : MIN_DISABLE_AFTER_MS;
  if (ms === null || ms < min) return `must be at least ${allowFailpoints ? "1s" : "1h"}, or "never"`;
  return null;
}

/** disableAfter in ms, or null for "never". */
export function disableAfterMs(text: string): number | null {
  return text === NEVER ? null : parseDuration(text);
}

/** The rules of each condition's value (the schema checks the shape): errors under `at`. */
export function filterErrors(filter: readonly Condition[], at: string): FieldError[] {
  const errors: FieldError[] = [];
  filter.forEach((condition, i) => {
    const here = `${at}/${i}/value`;
    const { op, value } = condition;
    if (value === undefined) {
      errors.push({ pointer: here, detail: "is required" });
      return;
    }
    if (JSON.stringify(value).length > MAX_VALUE_BYTES) {
      errors.push({ pointer: here, detail: `must be at most ${MAX_VALUE_BYTES} bytes of JSON` });
      return;
    }
    if (op === "in") {
      if (!Array.isArray(value) || value.length < 1 || value.length > MAX_IN_VALUES)
        errors.push({ pointer: here, detail: `must be an array of 1-${MAX_IN_VALUES} values` });
    } else if (op === "exists") {
      if (typeof value !== "boolean") errors.push({ pointer: here, detail: "must be true or false" });
    } else if (op === "prefix") {
      if (typeof value !== "string") errors.push({ pointer: here, detail: "must be a string" });
    } else if (op === "gt" || op === "lt") {
      if (typeof value !== "number") errors.push({ pointer: here, detail: "must be a number" });
    }
  });
  return errors;
}

/** The fields of the webhook body (DESIGN §4) a filter reads, as the commit knows them. */
export interface FilteredEvent {
  id: string;
  type: string;
  /** The commit time (ms): the body's `timestamp`. */
  occurredAt: number;
  aggregate: string;
  sequence: number;
  /** The payload as JSON text, parsed only when a condition reads into `data`. */
  payload: string;
}

/** A compiled filter: whether an event passes, reusing `parsed` (one parse of the payload per event). */
export type CompiledFilter = (event: FilteredEvent, parsed: { data?: unknown }) => boolean;

const MISSING = Symbol("missing");

function unescapePointer(segment: string): string {
  return segment.replaceAll("~1", "/").replaceAll("~0", "~");
}

function top(event: FilteredEvent, parsed: { data?: unknown }, field: string): unknown {
  switch (field) {
    case "id":
      return event.id;
    case "type":
      return event.type;
    case "timestamp":
      return new Date(event.occurredAt).toISOString();
    case "aggregate":
      return event.aggregate;
    case "sequence":
      return event.sequence;
    case "data":
      if (!("data" in parsed)) parsed.data = JSON.parse(event.payload) as unknown;
      return parsed.data;
    default:
      return MISSING;
  }
}

function walk(start: unknown, rest: readonly string[]): unknown {
  let at = start;
  for (const key of rest) {
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return MISSING;
      const index = Number(key);
      if (index >= at.length) return MISSING;
      at = at[index];
    } else if (typeof at === "object" && at !== null && Object.hasOwn(at, key)) {
      at = (at as Record<string, unknown>)[key];
    } else return MISSING;
  }
  return at;
}

/** JSON equality: same type and value, objects by their members whatever their order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const key of ka) {
    if (!Object.hasOwn(b, key)) return false;
    if (!jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function holds(op: FilterOp, value: unknown, found: unknown): boolean {
  if (found === MISSING) return op === "ne" || (op === "exists" && value === false);
  switch (op) {
    case "eq":
      return jsonEqual(found, value);
    case "ne":
      return !jsonEqual(found, value);
    case "in":
      return (value as unknown[]).some((candidate) => jsonEqual(found, candidate));
    case "exists":
      return value === true;
    case "prefix":
      return typeof found === "string" && found.startsWith(value as string);
    case "gt":
      return typeof found === "number" && found > (value as number);
    case "lt":
      return typeof found === "number" && found < (value as number);
  }
}

/** Compiles a validated filter (every condition must hold; an empty filter passes everything). */
export function compileFilter(filter: readonly Condition[]): CompiledFilter {
  const compiled = filter.map((condition) => {
    const segments = condition.path === "" ? [] : condition.path.slice(1).split("/").map(unescapePointer);
    const [field, ...rest] = segments;
    return { field, rest, op: condition.op, value: condition.value };
  });
  return (event, parsed) => {
    for (const c of compiled) {
      // The whole body ("" pointer) always exists and equals no single value a filter can name.
      const found = c.field === undefined ? {} : walk(top(event, parsed, c.field), c.rest);
      if (!holds(c.op, c.value, found)) return false;
    }
    return true;
  };
}
