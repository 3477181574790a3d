// OTLP/HTTP JSON export requests (OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL=http/json), written span
// by span into the request's bytes by ./tracing-export.ts: `{"resourceSpans":[{"resource":…,
// "scopeSpans":[{"scope":…,"spans":[` + the spans, comma-separated + `]}]}]}`. Ids are lower-case
// hex, times decimal strings of nanoseconds, integers intValue numbers (as the protobuf JSON
// mapping of the OTLP specification allows). About twice the bytes of ./tracing-otlp-proto.ts.
import {
  type AttributeKey,
  type Batch,
  BatchWriter,
  type OtlpFormat,
  type Overflow,
  type SpanIds,
  type SpanWriter,
  UTF8,
} from "./tracing-export.ts";

/** The JSON format, with the resource's attributes and the instrumentation scope of every span. */
export function otlpJson(
  resource: Record<string, unknown>,
  scope: { name: string; version: string },
): OtlpFormat {
  const prefix = UTF8.encode(
    `{"resourceSpans":[{"resource":{"attributes":${attributesJson(resource)},"droppedAttributesCount":0},` +
      `"scopeSpans":[{"scope":${JSON.stringify(scope)},"spans":[`,
  );
  const suffix = UTF8.encode("]}]}]}");
  return {
    contentType: "application/json",
    closingBytes: suffix.length,
    open(bytes) {
      bytes.set(prefix, 0);
      return prefix.length;
    },
    close(batch: Batch) {
      batch.bytes.set(suffix, batch.used);
      batch.used += suffix.length;
      return 0;
    },
    writer: (overflow, finished) => new JsonSpanWriter(suffix.length, overflow, finished),
  };
}

/** A span's OTLP JSON object: constant pieces copied, strings JSON-escaped, no string built. */
class JsonSpanWriter extends BatchWriter implements SpanWriter {
  #firstAttribute = true;

  constructor(reserve: number, overflow: Overflow, finished: () => void) {
    super(reserve, overflow, finished);
  }

  /** After a comma when the batch holds spans already. */
  override start(batch: Batch): void {
    super.start(batch);
    if (batch.spans > 0) {
      this.bytes[this.pos++] = COMMA;
      this.spanAt = this.pos;
    }
  }

  head(
    ids: SpanIds,
    name: string,
    detail: string | null,
    kind: number,
    startMs: number,
    endMs: number,
  ): void {
    this.raw(TRACE_ID);
    this.asciiAt(ids.idSource, ids.traceAt, 32);
    this.raw(SPAN_ID);
    this.asciiAt(ids.spanSource, ids.spanAt, 16);
    if (ids.parentAt >= 0) {
      this.raw(PARENT_SPAN_ID);
      this.asciiAt(ids.idSource, ids.parentAt, 16);
    }
    this.raw(NAME);
    this.chars(name);
    if (detail !== null) {
      this.byte(SPACE);
      this.chars(detail);
    }
    this.raw(KIND);
    this.byte(48 + kind);
    this.raw(START_TIME);
    this.nanos(startMs);
    this.raw(END_TIME);
    this.nanos(endMs);
    this.raw(ATTRIBUTES);
    this.#firstAttribute = true;
  }

  /** `{"key":"…","value":`, after a comma unless it is the first. */
  #key(key: AttributeKey): void {
    if (this.#firstAttribute) this.#firstAttribute = false;
    else this.byte(COMMA);
    key.json ??= UTF8.encode(`{"key":${JSON.stringify(key.name)},"value":`);
    this.raw(key.json);
  }

  string(key: AttributeKey, value: string): void {
    this.#key(key);
    this.raw(STRING_VALUE);
    this.text(value);
    this.raw(CLOSE_VALUE);
  }

  number(key: AttributeKey, value: number): void {
    this.#key(key);
    if (Number.isInteger(value)) {
      this.raw(INT_VALUE);
      this.int(value);
    } else {
      this.raw(DOUBLE_VALUE);
      // NaN and ±Infinity as the protobuf JSON mapping spells them: strings.
      if (Number.isFinite(value)) this.chars(String(value));
      else this.text(String(value));
    }
    this.raw(CLOSE_VALUE);
  }

  bool(key: AttributeKey, value: boolean): void {
    this.#key(key);
    this.raw(value ? TRUE_VALUE : FALSE_VALUE);
  }

  end(error: boolean, message: string | null, flags: number): void {
    if (!error) this.raw(STATUS_UNSET);
    else if (message === null) this.raw(STATUS_ERROR);
    else {
      this.raw(STATUS_ERROR_MESSAGE);
      this.text(message);
      this.raw(CLOSE_STATUS);
    }
    this.raw(FLAGS);
    this.int(flags);
    this.byte(CLOSE_BRACE);
    this.finished();
  }

  /** A JSON string: quotes around the escaped text. */
  text(text: string): void {
    this.byte(QUOTE);
    this.chars(text);
    this.byte(QUOTE);
  }

  /** A string's content inside a JSON string (no quotes), escaped as JSON.stringify does. */
  chars(text: string): void {
    const n = text.length;
    this.room(n);
    const bytes = this.bytes;
    const start = this.pos;
    let pos = start;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c === QUOTE || c === BACKSLASH || c > 0x7e) {
        // Escapes or non-ASCII: the runtime's JSON.stringify and UTF-8 encoder, from the start.
        const json = JSON.stringify(text);
        this.pos = start;
        this.room(json.length * 3);
        this.pos += UTF8.encodeInto(json.slice(1, -1), this.bytes.subarray(this.pos)).written;
        return;
      }
      bytes[pos++] = c;
    }
    this.pos = pos;
  }

  /** An integer as JSON digits (exact up to 2^53). */
  int(value: number): void {
    if (value >= 0 && value < 1e9 && value === Math.floor(value)) {
      this.room(10);
      this.pos = writeDigits(this.bytes, this.pos, value);
    } else {
      this.chars(String(value));
    }
  }

  /** Epoch milliseconds as OTLP's quoted decimal string of nanoseconds, to the microsecond. */
  nanos(epochMillis: number): void {
    this.room(24);
    const micros = Math.round(epochMillis * 1000);
    const high = Math.floor(micros / 1e8); // ~1.8e7 for years to come; changes every 100 s
    let low = (micros - high * 1e8) | 0; // below 1e8: int32 arithmetic from here
    if (high !== this.#high) {
      this.#high = high;
      this.#highDigits = UTF8.encode(String(high));
    }
    const bytes = this.bytes;
    let pos = this.pos;
    bytes[pos++] = QUOTE;
    const digits = this.#highDigits;
    for (let i = 0; i < digits.length; i++) bytes[pos++] = digits[i] as number;
    for (let i = pos + 7; i >= pos; i--) {
      const rest = (low / 10) | 0;
      bytes[i] = 48 + low - rest * 10;
      low = rest;
    }
    pos += 8;
    bytes[pos++] = 48;
    bytes[pos++] = 48;
    bytes[pos++] = 48;
    bytes[pos++] = QUOTE;
    this.pos = pos;
  }
  #high = -1;
  #highDigits: Uint8Array = new Uint8Array(0);
}

/** Writes a non-negative integer below 1e9 as digits at `pos`; returns the position after them. */
function writeDigits(bytes: Uint8Array, pos: number, value: number): number {
  let rest = value | 0; // below 1e9: int32 arithmetic
  let digits = 1;
  for (let r = rest; r >= 10; r = (r / 10) | 0) digits++;
  for (let i = pos + digits - 1; i >= pos; i--) {
    const next = (rest / 10) | 0;
    bytes[i] = 48 + rest - next * 10;
    rest = next;
  }
  return pos + digits;
}

/** OTLP JSON AnyValue of a resource attribute's value (strings, numbers, booleans and arrays of them). */
function anyValueJson(value: unknown): string {
  switch (typeof value) {
    case "string":
      return `{"stringValue":${JSON.stringify(value)}}`;
    case "number":
      if (Number.isInteger(value)) return `{"intValue":${value}}`;
      return `{"doubleValue":${Number.isFinite(value) ? value : `"${value}"`}}`;
    case "boolean":
      return `{"boolValue":${value}}`;
    default:
      if (Array.isArray(value)) return `{"arrayValue":{"values":[${value.map(anyValueJson).join(",")}]}}`;
      return `{"stringValue":${JSON.stringify(String(value))}}`;
  }
}

/** An attribute map as OTLP JSON KeyValues; undefined and null values are left out. */
function attributesJson(attributes: Record<string, unknown>): string {
  const pairs: string[] = [];
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    pairs.push(`{"key":${JSON.stringify(key)},"value":${anyValueJson(value)}}`);
  }
  return `[${pairs.join(",")}]`;
}

const bytes = (text: string) => UTF8.encode(text);
const TRACE_ID = bytes('{"traceId":"');
const SPAN_ID = bytes('","spanId":"');
const PARENT_SPAN_ID = bytes('","parentSpanId":"');
const NAME = bytes('","name":"');
const KIND = bytes('","kind":');
const START_TIME = bytes(',"startTimeUnixNano":');
const END_TIME = bytes(',"endTimeUnixNano":');
const ATTRIBUTES = bytes(',"attributes":[');
const STRING_VALUE = bytes('{"stringValue":');
const INT_VALUE = bytes('{"intValue":');
const DOUBLE_VALUE = bytes('{"doubleValue":');
const TRUE_VALUE = bytes('{"boolValue":true}}');
const FALSE_VALUE = bytes('{"boolValue":false}}');
const CLOSE_VALUE = bytes("}}");
const STATUS_UNSET = bytes('],"status":{}');
const STATUS_ERROR = bytes('],"status":{"code":2}');
const STATUS_ERROR_MESSAGE = bytes('],"status":{"code":2,"message":');
const CLOSE_STATUS = bytes("}");
const FLAGS = bytes(',"flags":');
const COMMA = 44;
const QUOTE = 34;
const SPACE = 32;
const BACKSLASH = 92;
const CLOSE_BRACE = 125;
