// The request schemas of the write side (DESIGN §3 commits): the domain's own input, so the
// commit's normalisation (normalize.ts) and every interface that accepts a commit (the HTTP
// API, MCP, proposals) validate with the same rules. valibot; optional fields accept `null` as
// "absent"; objects are strict (unknown fields are refused).
import * as v from "valibot";
import { EVENT_TYPE_PATTERN } from "../endpoints/patterns.ts";
import { DURATION_PATTERN } from "../lib/duration.ts";

// `.` and `..` are refused: as a path segment a URL resolver removes them (`records/../tokens`).
const NAME = /^(?!\.\.?$)[A-Za-z0-9._:-]{1,128}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

export const absent = <S extends v.GenericSchema>(schema: S) => v.nullish(schema);

export const Name = v.pipe(
  v.string(),
  v.regex(NAME, "must be 1-128 characters of A-Z a-z 0-9 . _ : -, and not . or .."),
);
export const Duration = v.pipe(
  v.string(),
  v.regex(DURATION_PATTERN, "must be a duration like 30s, 5m, 24h or 7d"),
);
export const Timestamp = v.pipe(
  v.string(),
  v.regex(TIMESTAMP, "must be an RFC 3339 timestamp like 2026-11-29T10:00:00Z"),
  v.check(isRealDateTime, "must be a valid date and time"),
);

/** Date.parse rolls impossible dates over (2026-02-30 is taken as 2026-03-02); refuse them. */
function isRealDateTime(text: string): boolean {
  if (Number.isNaN(Date.parse(text))) return false;
  const [year = 0, month = 0, day = 0] = text.slice(0, 10).split("-").map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth;
}

// A JSON object, passed through as parsed. Not v.record: it accepts an array as an index-keyed
// object ([1, 2] → {"0": 1, "1": 2}) and silently drops the keys `constructor`, `prototype`
// and `__proto__`, which are ordinary keys in a client's JSON document.
export const JsonObject = v.custom<Record<string, unknown>>(
  (input) => typeof input === "object" && input !== null && !Array.isArray(input),
  "must be a JSON object",
);
const Uuid = v.pipe(v.string(), v.uuid("must be a UUID"));
export const EventType = v.pipe(
  v.string(),
  v.maxLength(200, "must be at most 200 characters"),
  v.regex(EVENT_TYPE_PATTERN, "must be dot-separated segments of A-Z a-z 0-9 _ : -, e.g. return.approved"),
);
export const Aggregate = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.maxLength(255, "must be at most 255 characters"),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"),
);

export const RecordWriteSchema = v.strictObject({
  collection: Name,
  id: Name,
  expectedVersion: absent(
    v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0, "must be 0 or more")),
  ),
  data: absent(JsonObject),
  delete: absent(v.boolean()),
});

export const EventSchema = v.strictObject({
  id: absent(Uuid),
  type: EventType,
  aggregate: absent(Aggregate),
  payload: absent(v.unknown()),
  deliverBy: absent(Timestamp),
  deliverWithin: absent(Duration),
  deliverAfter: absent(Timestamp),
  endpoints: absent(v.pipe(v.array(v.string()), v.maxLength(100, "must list at most 100 endpoints"))),
});

export const CommitSchema = v.strictObject({
  records: absent(v.array(RecordWriteSchema)),
  events: absent(v.array(EventSchema)),
});
