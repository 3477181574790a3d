// OTLP/HTTP protobuf export requests (OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL=http/protobuf, the
// OTLP default), written span by span into the request's bytes by ./tracing-export.ts: an
// ExportTraceServiceRequest holding one ResourceSpans (the resource) holding one ScopeSpans
// (outboxd's scope) holding the spans. A span is about half its OTLP JSON (ids as bytes, times
// as fixed64, no key names around every field), so every thread that handles it (this one
// writing it, the export worker and its HTTP client, the collector) has half the bytes to move.
//
// Field numbers from opentelemetry/proto (collector/trace/v1, trace/v1, common/v1, resource/v1).
// A message's length comes before it: a span's is written once the span is (two bytes kept
// for it, the span moved by a byte when it needs one or three); the ResourceSpans and
// ScopeSpans lengths, which hold the whole batch, when the batch is closed, into room kept
// before its first span.
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

/** The protobuf format, with the resource's attributes and the instrumentation scope of every span. */
export function otlpProto(
  resource: Record<string, unknown>,
  scope: { name: string; version: string },
): OtlpFormat {
  const resourceField = lengthDelimited(
    RESOURCE_SPANS_RESOURCE,
    attributesProto(resource, RESOURCE_ATTRIBUTES),
  );
  const scopeField = lengthDelimited(
    SCOPE_SPANS_SCOPE,
    concat([
      lengthDelimited(SCOPE_NAME, UTF8.encode(scope.name)),
      lengthDelimited(SCOPE_VERSION, UTF8.encode(scope.version)),
    ]),
  );
  // Room for the request's framing: two tags, two lengths of up to 5 bytes, resource and scope.
  const firstSpanAt = 1 + 5 + resourceField.length + 1 + 5 + scopeField.length;
  return {
    contentType: "application/x-protobuf",
    closingBytes: 0,
    open: () => firstSpanAt,
    close(batch: Batch) {
      const scopeSpans = scopeField.length + (batch.used - firstSpanAt);
      const resourceSpans = resourceField.length + 1 + varintLength(scopeSpans) + scopeSpans;
      const framing =
        1 +
        varintLength(resourceSpans) +
        resourceField.length +
        1 +
        varintLength(scopeSpans) +
        scopeField.length;
      const bytes = batch.bytes;
      const start = firstSpanAt - framing;
      let pos = start;
      bytes[pos++] = REQUEST_RESOURCE_SPANS;
      pos = writeVarint(bytes, pos, resourceSpans);
      bytes.set(resourceField, pos);
      pos += resourceField.length;
      bytes[pos++] = RESOURCE_SPANS_SCOPE_SPANS;
      pos = writeVarint(bytes, pos, scopeSpans);
      bytes.set(scopeField, pos);
      return start;
    },
    writer: (overflow, finished) => new ProtoSpanWriter(overflow, finished),
  };
}

/** A span's protobuf message, its length patched in at the end. */
class ProtoSpanWriter extends BatchWriter implements SpanWriter {
  /** A string's UTF-8 bytes when it is not plain ASCII (set by #measure, used by #utf8). */
  #encoded: Uint8Array | null = null;

  constructor(overflow: Overflow, finished: () => void) {
    super(0, overflow, finished);
  }

  /** The spans field's tag and two bytes for the span's length. */
  override start(batch: Batch): void {
    super.start(batch);
    this.room(3);
    this.bytes[this.pos] = SCOPE_SPANS_SPANS;
    this.pos += 3;
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
    this.#hex(ids.idSource, ids.traceAt, 32);
    this.raw(SPAN_ID);
    this.#hex(ids.spanSource, ids.spanAt, 16);
    if (ids.parentAt >= 0) {
      this.raw(PARENT_SPAN_ID);
      this.#hex(ids.idSource, ids.parentAt, 16);
    }
    this.byte(SPAN_NAME);
    if (detail === null) {
      const n = this.#measure(name);
      this.#varint(n);
      this.#utf8(name, n);
    } else {
      const nameBytes = this.#measure(name);
      const nameEncoded = this.#encoded;
      const detailBytes = this.#measure(detail);
      const detailEncoded = this.#encoded;
      this.#varint(nameBytes + 1 + detailBytes);
      this.#encoded = nameEncoded;
      this.#utf8(name, nameBytes);
      this.byte(SPACE);
      this.#encoded = detailEncoded;
      this.#utf8(detail, detailBytes);
    }
    this.room(2 + 18);
    this.bytes[this.pos++] = SPAN_KIND;
    this.bytes[this.pos++] = kind;
    this.bytes[this.pos++] = SPAN_START;
    this.#nanos(startMs);
    this.bytes[this.pos++] = SPAN_END;
    this.#nanos(endMs);
  }

  /** A KeyValue's tag, its length and its key, for a value of `valueBytes` (its AnyValue's). */
  #key(key: AttributeKey, valueBytes: number): void {
    key.proto ??= lengthDelimited(KEY_VALUE_KEY, key.utf8);
    const kv = key.proto.length + 1 + varintLength(valueBytes) + valueBytes;
    this.byte(SPAN_ATTRIBUTES);
    this.#varint(kv);
    this.raw(key.proto);
    this.byte(KEY_VALUE_VALUE);
    this.#varint(valueBytes);
  }

  string(key: AttributeKey, value: string): void {
    const n = this.#measure(value);
    const encoded = this.#encoded;
    this.#key(key, 1 + varintLength(n) + n);
    this.byte(ANY_STRING);
    this.#varint(n);
    this.#encoded = encoded;
    this.#utf8(value, n);
  }

  number(key: AttributeKey, value: number): void {
    if (Number.isSafeInteger(value) && value >= 0) {
      this.#key(key, 1 + varintLength(value));
      this.byte(ANY_INT);
      this.#varint(value);
    } else if (Number.isSafeInteger(value)) {
      // A negative int64 is ten bytes of two's complement.
      this.#key(key, 11);
      this.byte(ANY_INT);
      let rest = BigInt.asUintN(64, BigInt(value));
      this.room(10);
      for (let i = 0; i < 9; i++) {
        this.bytes[this.pos++] = Number(rest & 0x7fn) | 0x80;
        rest >>= 7n;
      }
      this.bytes[this.pos++] = Number(rest);
    } else {
      this.#key(key, 9);
      this.byte(ANY_DOUBLE);
      DOUBLE_VIEW.setFloat64(0, value, true);
      this.raw(DOUBLE_BYTES);
    }
  }

  bool(key: AttributeKey, value: boolean): void {
    this.#key(key, 2);
    this.byte(ANY_BOOL);
    this.byte(value ? 1 : 0);
  }

  end(error: boolean, message: string | null, flags: number): void {
    if (error) {
      // Status: the message (2) if any, code ERROR (3 = 2).
      const n = message === null ? 0 : this.#measure(message);
      const encoded = this.#encoded;
      const messageBytes = message === null ? 0 : 1 + varintLength(n) + n;
      this.byte(SPAN_STATUS);
      this.#varint(messageBytes + 2);
      if (message !== null) {
        this.byte(STATUS_MESSAGE);
        this.#varint(n);
        this.#encoded = encoded;
        this.#utf8(message, n);
      }
      this.raw(STATUS_CODE_ERROR);
    }
    this.room(6);
    const bytes = this.bytes;
    bytes[this.pos++] = SPAN_FLAGS_TAG_LOW;
    bytes[this.pos++] = SPAN_FLAGS_TAG_HIGH;
    bytes[this.pos++] = flags & 0xff;
    bytes[this.pos++] = (flags >>> 8) & 0xff;
    bytes[this.pos++] = (flags >>> 16) & 0xff;
    bytes[this.pos++] = flags >>> 24;
    this.#patchLength();
    this.finished();
  }

  /** Writes the span's length into the two bytes kept after its tag, moving the span if it needs one or three+. */
  #patchLength(): void {
    const length = this.pos - (this.spanAt + 3);
    if (length >= 128 && length < 16384) {
      this.bytes[this.spanAt + 1] = (length & 0x7f) | 0x80;
      this.bytes[this.spanAt + 2] = length >>> 7;
      return;
    }
    if (length < 128) {
      this.bytes.copyWithin(this.spanAt + 2, this.spanAt + 3, this.pos);
      this.bytes[this.spanAt + 1] = length;
      this.pos -= 1;
      return;
    }
    const extra = varintLength(length) - 2;
    this.room(extra); // may move the span to a new batch
    const at = this.spanAt;
    this.bytes.copyWithin(at + 3 + extra, at + 3, this.pos);
    writeVarint(this.bytes, at + 1, length);
    this.pos += extra;
  }

  /** The UTF-8 length of `text`; keeps its bytes in #encoded unless it is plain ASCII. */
  #measure(text: string): number {
    const n = text.length;
    for (let i = 0; i < n; i++) {
      if (text.charCodeAt(i) > 0x7f) {
        this.#encoded = UTF8.encode(text);
        return this.#encoded.length;
      }
    }
    this.#encoded = null;
    return n;
  }

  /** `text`'s `n` UTF-8 bytes, as #measure found them. */
  #utf8(text: string, n: number): void {
    const encoded = this.#encoded;
    if (encoded !== null) {
      this.room(n);
      this.bytes.set(encoded, this.pos);
      this.pos += n;
      return;
    }
    this.asciiAt(text, 0, n);
  }

  /** `chars` lower-case hex digits of `text` from `start`, as bytes. */
  #hex(text: string, start: number, chars: number): void {
    this.room(chars >>> 1);
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = start, end = start + chars; i < end; i += 2) {
      const high = text.charCodeAt(i);
      const low = text.charCodeAt(i + 1);
      bytes[pos++] = ((high <= 57 ? high - 48 : high - 87) << 4) | (low <= 57 ? low - 48 : low - 87);
    }
    this.pos = pos;
  }

  #varint(value: number): void {
    this.room(10);
    this.pos = writeVarint(this.bytes, this.pos, value);
  }

  /** Epoch milliseconds as fixed64 nanoseconds (little-endian), to the microsecond. */
  #nanos(epochMillis: number): void {
    const micros = Math.round(epochMillis * 1000); // < 2^53 until the year 287,396
    const microsHigh = Math.floor(micros / TWO_32);
    const lowNanos = (micros - microsHigh * TWO_32) * 1000; // < 2^42: exact
    const carry = Math.floor(lowNanos / TWO_32);
    const low = lowNanos - carry * TWO_32;
    const high = microsHigh * 1000 + carry;
    const bytes = this.bytes;
    let pos = this.pos;
    bytes[pos++] = low & 0xff;
    bytes[pos++] = (low >>> 8) & 0xff;
    bytes[pos++] = (low >>> 16) & 0xff;
    bytes[pos++] = low >>> 24;
    bytes[pos++] = high & 0xff;
    bytes[pos++] = (high >>> 8) & 0xff;
    bytes[pos++] = (high >>> 16) & 0xff;
    bytes[pos++] = high >>> 24;
    this.pos = pos;
  }
}

/** Writes a non-negative integer (up to 2^53) as a varint at `pos`; returns the position after it. */
function writeVarint(bytes: Uint8Array, pos: number, value: number): number {
  if (value < 0x80000000) {
    let small = value | 0; // int32 arithmetic for the usual lengths and numbers
    while (small >= 0x80) {
      bytes[pos++] = (small & 0x7f) | 0x80;
      small >>>= 7;
    }
    bytes[pos++] = small;
    return pos;
  }
  let rest = value;
  while (rest >= 0x80) {
    bytes[pos++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  bytes[pos++] = rest;
  return pos;
}

/** The bytes of a varint of `value` (non-negative, up to 2^53). */
function varintLength(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  let length = 4;
  for (let rest = Math.floor(value / 0x10000000); rest > 0; rest = Math.floor(rest / 0x80)) length++;
  return length;
}

// Cold paths (once at start): the resource and scope messages.

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** A length-delimited field: its tag byte, the payload's length, the payload. */
function lengthDelimited(tag: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + varintLength(payload.length) + payload.length);
  out[0] = tag;
  out.set(payload, writeVarint(out, 1, payload.length));
  return out;
}

/** An AnyValue of a resource attribute's value (strings, numbers, booleans and arrays of them). */
function anyValueProto(value: unknown): Uint8Array {
  switch (typeof value) {
    case "string":
      return lengthDelimited(ANY_STRING, UTF8.encode(value));
    case "number":
      if (Number.isSafeInteger(value) && value >= 0) {
        const out = new Uint8Array(1 + varintLength(value));
        out[0] = ANY_INT;
        writeVarint(out, 1, value);
        return out;
      }
      DOUBLE_VIEW.setFloat64(0, value, true);
      return concat([Uint8Array.of(ANY_DOUBLE), DOUBLE_BYTES]);
    case "boolean":
      return Uint8Array.of(ANY_BOOL, value ? 1 : 0);
    default:
      if (Array.isArray(value)) {
        // ArrayValue (5) of values (1).
        return lengthDelimited(
          ANY_ARRAY,
          concat(value.map((item) => lengthDelimited(ARRAY_VALUES, anyValueProto(item)))),
        );
      }
      return lengthDelimited(ANY_STRING, UTF8.encode(String(value)));
  }
}

/** Attributes as repeated KeyValue fields with tag `tag`; undefined and null values are left out. */
function attributesProto(attributes: Record<string, unknown>, tag: number): Uint8Array {
  const fields: Uint8Array[] = [];
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    const pair = concat([
      lengthDelimited(KEY_VALUE_KEY, UTF8.encode(key)),
      lengthDelimited(KEY_VALUE_VALUE, anyValueProto(value)),
    ]);
    fields.push(lengthDelimited(tag, pair));
  }
  return concat(fields);
}

/** A field's tag byte: its number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
const tag = (field: number, wire: number) => (field << 3) | wire;
// ExportTraceServiceRequest.resource_spans (1); ResourceSpans.resource (1), .scope_spans (2);
// Resource.attributes (1); ScopeSpans.scope (1), .spans (2); InstrumentationScope.name (1), .version (2).
const REQUEST_RESOURCE_SPANS = tag(1, 2);
const RESOURCE_SPANS_RESOURCE = tag(1, 2);
const RESOURCE_SPANS_SCOPE_SPANS = tag(2, 2);
const RESOURCE_ATTRIBUTES = tag(1, 2);
const SCOPE_SPANS_SCOPE = tag(1, 2);
const SCOPE_SPANS_SPANS = tag(2, 2);
const SCOPE_NAME = tag(1, 2);
const SCOPE_VERSION = tag(2, 2);
// Span: trace_id (1), span_id (2), parent_span_id (4), name (5), kind (6), start (7, fixed64),
// end (8, fixed64), attributes (9), status (15), flags (16, fixed32).
const TRACE_ID = Uint8Array.of(tag(1, 2), 16);
const SPAN_ID = Uint8Array.of(tag(2, 2), 8);
const PARENT_SPAN_ID = Uint8Array.of(tag(4, 2), 8);
const SPAN_NAME = tag(5, 2);
const SPAN_KIND = tag(6, 0);
const SPAN_START = tag(7, 1);
const SPAN_END = tag(8, 1);
const SPAN_ATTRIBUTES = tag(9, 2);
const SPAN_STATUS = tag(15, 2);
const SPAN_FLAGS_TAG_LOW = (tag(16, 5) & 0x7f) | 0x80; // the tag of field 16 is a two-byte varint
const SPAN_FLAGS_TAG_HIGH = tag(16, 5) >>> 7;
// Status: message (2), code (3; 2 = ERROR).
const STATUS_MESSAGE = tag(2, 2);
const STATUS_CODE_ERROR = Uint8Array.of(tag(3, 0), 2);
// KeyValue: key (1), value (2). AnyValue: string (1), bool (2), int (3), double (4), array (5);
// ArrayValue: values (1).
const KEY_VALUE_KEY = tag(1, 2);
const KEY_VALUE_VALUE = tag(2, 2);
const ANY_STRING = tag(1, 2);
const ANY_BOOL = tag(2, 0);
const ANY_INT = tag(3, 0);
const ANY_DOUBLE = tag(4, 1);
const ANY_ARRAY = tag(5, 2);
const ARRAY_VALUES = tag(1, 2);
const SPACE = 32;
const TWO_32 = 2 ** 32;
const DOUBLE_BYTES = new Uint8Array(8);
const DOUBLE_VIEW = new DataView(DOUBLE_BYTES.buffer);
