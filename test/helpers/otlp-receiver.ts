// A real OTLP/HTTP trace receiver on 127.0.0.1, port 0: it accepts what outboxd's exporter
// POSTs to /v1/traces, OTLP protobuf (application/x-protobuf) or OTLP JSON (application/json),
// and decodes every span. The protobuf is read by a decoder of the wire format written here
// from the OTLP .proto files' field numbers, strict about what it reads: a field of the wrong
// wire type, a length past its message's end, a varint longer than it needs to be (a collector
// may accept one; outboxd must not rely on that) fails the request (400).
import { Buffer } from "node:buffer";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** The status message ("" when none). */
  statusMessage: string;
  /** Start and end, nanoseconds since the epoch, as decimal strings (as OTLP JSON carries them). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  /** OTLP span flags (W3C sampled in the low byte; bits 8–9 whether the parent is remote). */
  flags: number;
  /** Resource attributes of the batch it came in (service.name …). */
  resource: Record<string, string | number | boolean>;
  /** The instrumentation scope's name and version. */
  scope: { name: string; version: string };
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the export requests received. */
  contentTypes: string[];
  /** Requests that could not be decoded, with why (each was answered 400). */
  malformed: string[];
  stop(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number; message?: string };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  flags?: number;
}
interface OtlpExport {
  resourceSpans: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans: { scope?: { name?: string; version?: string }; spans: OtlpSpan[] }[];
  }[];
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (v !== undefined) out[key] = typeof v === "string" && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

export function startOtlpReceiver(): OtlpReceiver {
  const receiver: OtlpReceiver = {
    url: "",
    spans: [],
    contentTypes: [],
    malformed: [],
    stop: async () => {},
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method !== "POST" || path !== "/v1/traces")
        return new Response("not found", { status: 404 });
      const contentType = request.headers.get("content-type") ?? "";
      receiver.contentTypes.push(contentType);
      let body: OtlpExport;
      try {
        body = contentType.startsWith("application/x-protobuf")
          ? decodeExport(new Uint8Array(await request.arrayBuffer()))
          : ((await request.json()) as OtlpExport);
      } catch (error) {
        receiver.malformed.push(String(error));
        return new Response(String(error), { status: 400 });
      }
      for (const batch of body.resourceSpans) {
        const resource = attributes(batch.resource?.attributes);
        for (const scope of batch.scopeSpans) {
          for (const span of scope.spans) {
            receiver.spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              kind: span.kind,
              attributes: attributes(span.attributes),
              status: span.status?.code ?? 0,
              statusMessage: span.status?.message ?? "",
              startTimeUnixNano: String(span.startTimeUnixNano),
              endTimeUnixNano: String(span.endTimeUnixNano),
              flags: span.flags ?? 0,
              resource,
              scope: { name: scope.scope?.name ?? "", version: scope.scope?.version ?? "" },
            });
          }
        }
      }
      return contentType.startsWith("application/x-protobuf")
        ? new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } })
        : Response.json({ partialSuccess: {} });
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}`;
  receiver.stop = async () => {
    await server.stop(true);
  };
  return receiver;
}

/** One field of a protobuf message: its number and value (by wire type). */
type Field =
  | { number: number; wire: 0; value: bigint }
  | { number: number; wire: 1; value: Uint8Array }
  | { number: number; wire: 2; value: Uint8Array }
  | { number: number; wire: 5; value: Uint8Array };

/** A message's fields, in order; throws on anything the wire format does not allow. */
export function protobufFields(bytes: Uint8Array): Field[] {
  const fields: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length) throw new Error("protobuf: varint past the end");
      if (shift > 63n) throw new Error("protobuf: varint longer than 10 bytes");
      const byte = bytes[at++] as number;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte === 0 && shift > 0n) throw new Error("protobuf: a varint longer than it needs to be");
      if (byte < 0x80) return value;
    }
  };
  const take = (n: number) => {
    if (at + n > bytes.length) throw new Error(`protobuf: ${n} bytes past the end`);
    const out = bytes.subarray(at, at + n);
    at += n;
    return out;
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const number = key >>> 3;
    const wire = key & 7;
    if (number === 0) throw new Error("protobuf: field number 0");
    if (wire === 0) fields.push({ number, wire, value: varint() });
    else if (wire === 1) fields.push({ number, wire, value: take(8) });
    else if (wire === 2) fields.push({ number, wire, value: take(Number(varint())) });
    else if (wire === 5) fields.push({ number, wire, value: take(4) });
    else throw new Error(`protobuf: wire type ${wire}`);
  }
  return fields;
}

/** The fields numbered `number` of a message, all of wire type `wire` (else it throws). */
function fieldsOf<W extends Field["wire"]>(fields: Field[], number: number, wire: W) {
  const found = fields.filter((field) => field.number === number);
  for (const field of found)
    if (field.wire !== wire)
      throw new Error(`protobuf: field ${number} has wire type ${field.wire}, not ${wire}`);
  return found as Extract<Field, { wire: W }>[];
}
const one = <W extends Field["wire"]>(fields: Field[], number: number, wire: W) =>
  fieldsOf(fields, number, wire).at(-1);
const utf8 = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder("utf-8", { fatal: true }).decode(bytes);
const hex = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : Buffer.from(bytes).toString("hex");
const little = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** An AnyValue (common/v1): string 1, bool 2, int 3, double 4. */
function anyValue(bytes: Uint8Array): OtlpValue {
  const fields = protobufFields(bytes);
  const string = one(fields, 1, 2);
  if (string) return { stringValue: utf8(string.value) };
  const bool = one(fields, 2, 0);
  if (bool) return { boolValue: bool.value !== 0n };
  const int = one(fields, 3, 0);
  if (int) return { intValue: Number(BigInt.asIntN(64, int.value)) };
  const double = one(fields, 4, 1);
  if (double) return { doubleValue: little(double.value).getFloat64(0, true) };
  return {};
}

/** KeyValue (common/v1): key 1, value 2. */
function keyValues(fields: Field[], number: number): OtlpKeyValue[] {
  return fieldsOf(fields, number, 2).map(({ value }) => {
    const pair = protobufFields(value);
    const anyBytes = one(pair, 2, 2);
    return { key: utf8(one(pair, 1, 2)?.value) ?? "", value: anyBytes ? anyValue(anyBytes.value) : {} };
  });
}

/** ExportTraceServiceRequest (collector/trace/v1) → the OTLP JSON shape the receiver reads. */
function decodeExport(bytes: Uint8Array): OtlpExport {
  return {
    resourceSpans: fieldsOf(protobufFields(bytes), 1, 2).map(({ value }) => {
      const resourceSpans = protobufFields(value);
      const resource = one(resourceSpans, 1, 2);
      return {
        resource: { attributes: resource ? keyValues(protobufFields(resource.value), 1) : [] },
        scopeSpans: fieldsOf(resourceSpans, 2, 2).map(({ value }) => {
          const scopeSpans = protobufFields(value);
          const scopeBytes = one(scopeSpans, 1, 2);
          const scope = scopeBytes ? protobufFields(scopeBytes.value) : [];
          return {
            scope: { name: utf8(one(scope, 1, 2)?.value), version: utf8(one(scope, 2, 2)?.value) },
            spans: fieldsOf(scopeSpans, 2, 2).map(({ value }) => decodeSpan(value)),
          };
        }),
      };
    }),
  };
}

/** Span (trace/v1): ids 1, 2, 4; name 5; kind 6; times 7, 8 (fixed64); attributes 9; status 15; flags 16. */
function decodeSpan(bytes: Uint8Array): OtlpSpan {
  const fields = protobufFields(bytes);
  const id = (number: number, length: number) => {
    const value = one(fields, number, 2)?.value;
    if (value !== undefined && value.length !== length)
      throw new Error(`protobuf: span field ${number} has ${value.length} bytes, not ${length}`);
    return hex(value);
  };
  const time = (number: number) => {
    const value = one(fields, number, 1)?.value;
    return value === undefined ? "0" : little(value).getBigUint64(0, true).toString();
  };
  const statusBytes = one(fields, 15, 2);
  const status = statusBytes ? protobufFields(statusBytes.value) : [];
  const flags = one(fields, 16, 5);
  return {
    traceId: id(1, 16) ?? "",
    spanId: id(2, 8) ?? "",
    parentSpanId: id(4, 8),
    name: utf8(one(fields, 5, 2)?.value) ?? "",
    kind: Number(one(fields, 6, 0)?.value ?? 0n),
    attributes: keyValues(fields, 9),
    status: { code: Number(one(status, 3, 0)?.value ?? 0n), message: utf8(one(status, 2, 2)?.value) },
    startTimeUnixNano: time(7),
    endTimeUnixNano: time(8),
    flags: flags ? little(flags.value).getUint32(0, true) : 0,
  };
}
