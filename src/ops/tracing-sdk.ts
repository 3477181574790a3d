// Tracing on, behind src/ops/tracing.ts and imported only when tracing is on: outboxd's three
// spans (the server span, outboxd.commit, outboxd.deliver) exported as OTLP/HTTP JSON.
//
// Each span is begun and ended in one place, so it is never an object the rest of outboxd holds:
// `begin` gives its ids, its parent's and the traceparent naming it; `end` writes its OTLP JSON
// text, which ./tracing-export.ts copies at once into the bytes of the next export request. The
// SDK's Tracer and Span, and then its BatchSpanProcessor, OTLP transformer and node:http
// transport, cost a loaded server 12% of its commits (docs/benchmarks.md "Tracing cost"):
// span objects, attribute maps and hrtimes kept alive until an export turned them into an
// object tree, a JSON string and a request. What the OpenTelemetry SDK still gives is read once
// at start: the resource (OTEL_RESOURCE_ATTRIBUTES, through its env detector) and the ratio
// sampler. The sampling decision is the SDK's rule read from OTEL_TRACES_SAMPLER (default
// parentbased_always_on); a span not sampled records nothing, but still gets its ids so the
// traceparent passed on names it (flags 00), as the SDK's non-recording span does.
//
// No context manager: every span's parent is given explicitly (the request's traceparent, the
// commit's stored one), so nothing depends on AsyncLocalStorage and nothing global changes.
import { Buffer } from "node:buffer";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import packageJson from "../../package.json" with { type: "json" };
import {
  type AttemptResult,
  type DeliverAttempt,
  type Tracing,
  type TracingSettings,
  validTraceparent,
} from "./tracing.ts";
import { exportSettings, otlpJsonExporter, type SpanWriter } from "./tracing-export.ts";

type Warn = (message: string, fields: Record<string, unknown>) => void;

/**
 * For bench/probe/tracing-cpu.ts only: while `off`, the hooks of a process with tracing on call
 * straight through as NO_TRACING's do, so one process can alternate blocks of commits with and
 * without spans (the same heap, JIT state and machine load for both).
 */
export const tracingBenchSwitch = { off: false };

export function otelTracing(settings: TracingSettings, warn: Warn): Tracing {
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({ "service.name": settings.serviceName, "service.version": packageJson.version }),
  );
  const exporter = otlpJsonExporter(
    exportSettings(settings.tracesUrl, process.env, warn),
    `{"attributes":${attributesJson(resource.attributes)},"droppedAttributesCount":0}`,
    JSON.stringify({ name: "outboxd", version: packageJson.version }),
    `outboxd/${packageJson.version}`,
    warn,
  );
  const sampled = samplerFromEnv(process.env, warn);

  /** A new span under `parent` (a traceparent, or none: a new trace), sampled or not. */
  function begin(parent: string | null | undefined): Begun {
    const valid = validTraceparent(parent);
    if (valid === undefined) {
      const traceAt = drawId(32);
      const traceSource = hexPool;
      const spanAt = drawId(16);
      return new Begun(traceSource, traceAt, -1, hexPool, spanAt, sampled(undefined, traceSource, traceAt));
    }
    const last = valid.charCodeAt(54); // the flags' low hex digit holds the sampled bit
    const flags = (last <= 57 ? last - 48 : last - 87) & 1;
    const spanAt = drawId(16);
    return new Begun(valid, 3, 36, hexPool, spanAt, sampled(flags, valid, 3));
  }

  /** The server span's traceparent per request, for the commit route (requestTraceparent). */
  const middleware: MiddlewareHandler = async (c, next) => {
    if (tracingBenchSwitch.off) return next();
    const span = begin(c.req.raw.headers.get("traceparent"));
    (c.req.raw as RequestWithSpan)[SERVER_SPAN] = span.traceparent;
    try {
      await next();
    } finally {
      if (span.sampled) {
        const endMs = now();
        const method = c.req.method;
        const status = c.res.status;
        const route = routePath(c);
        const named = route && route !== "*" && route !== "/*";
        const w = exporter.span();
        if (w !== null) {
          writeIds(w, span);
          w.byte(QUOTE);
          w.chars(method);
          if (named) {
            w.byte(SPACE);
            w.chars(route);
          }
          w.byte(QUOTE);
          writeTimes(w, SERVER_KIND, span.startMs, endMs);
          w.raw(ATTR_METHOD);
          w.text(method);
          w.raw(ATTR_PATH);
          w.text(c.req.path);
          w.raw(ATTR_STATUS_CODE_NEXT);
          w.int(status);
          if (named) {
            w.raw(ATTR_ROUTE);
            w.text(route);
          }
          w.raw(CLOSE_VALUE);
          // Server spans: 4xx is the caller's doing, only 5xx marks the span as failed (semconv).
          // Flags: W3C sampled, and whether the parent is known to be remote (OTLP span flags).
          w.raw(status >= 500 ? END_ERROR : END_UNSET);
          w.int(span.parentAt < 0 ? 0x101 : 0x301);
          w.byte(CLOSE_BRACE);
          w.end();
        }
      }
    }
  };

  /** A webhook send's span: its status code when an answer came; failed unless 2xx. */
  function endSend(span: Begun, attempt: DeliverAttempt, result: AttemptResult) {
    const code = result.statusCode;
    const ok = code !== null && code >= 200 && code < 300;
    endAttempt(span, CLIENT_KIND, attempt, code, ok ? null : (code ?? "send_failed"), result.error);
  }

  /**
   * An outboxd.deliver span: the attempt's attributes, its status code if any, and for a failed
   * attempt `error.type` (`failure`) and status ERROR with `message` when there is one.
   */
  function endAttempt(
    span: Begun,
    kind: Uint8Array,
    attempt: DeliverAttempt,
    code: number | null,
    failure: number | string | null,
    message: string | null,
  ) {
    const endMs = now();
    const w = exporter.span();
    if (w === null) return;
    writeIds(w, span);
    w.raw(DELIVER);
    writeTimes(w, kind, span.startMs, endMs);
    w.raw(ATTR_EVENT_ID);
    w.text(attempt.eventId);
    w.raw(ATTR_ENDPOINT_ID);
    w.text(attempt.endpointId);
    w.raw(ATTR_AGGREGATE);
    w.text(attempt.aggregate);
    w.raw(ATTR_SEQUENCE);
    writeNumber(w, attempt.sequence);
    w.raw(ATTR_ATTEMPT);
    writeNumber(w, attempt.attempt);
    w.raw(CLOSE_VALUE);
    if (code !== null) {
      w.raw(ATTR_STATUS_CODE);
      w.int(code);
      w.raw(CLOSE_VALUE);
    }
    if (failure === null) {
      w.raw(END_UNSET);
    } else {
      w.raw(ATTR_ERROR_TYPE);
      if (typeof failure === "number") w.int(failure);
      else w.ascii(failure);
      w.raw(CLOSE_STRING_VALUE);
      if (message) {
        w.raw(END_ERROR_MESSAGE);
        w.text(message);
        w.raw(CLOSE_STATUS);
      } else {
        w.raw(END_ERROR);
      }
    }
    w.byte(ONE);
    w.byte(CLOSE_BRACE);
    w.end();
  }

  /** An outboxd.commit span: the attributes `describe` gave, or the problem it failed with. */
  function endCommit(span: Begun, attributes: Record<string, unknown>, error?: string) {
    const endMs = now();
    const w = exporter.span();
    if (w === null) return;
    writeIds(w, span);
    w.raw(COMMIT);
    writeTimes(w, INTERNAL_KIND, span.startMs, endMs);
    let first = true;
    for (const key in attributes) {
      const value = attributes[key];
      if (value === undefined || value === null) continue;
      w.raw(first ? KEY : NEXT_KEY);
      first = false;
      w.chars(key);
      w.raw(VALUE);
      writeAnyValue(w, value);
      w.byte(CLOSE_BRACE);
    }
    if (error === undefined) {
      w.raw(END_UNSET);
    } else {
      w.raw(END_ERROR_MESSAGE);
      w.text(error);
      w.raw(CLOSE_STATUS);
    }
    w.byte(ONE);
    w.byte(CLOSE_BRACE);
    w.end();
  }

  return {
    enabled: true,
    middleware: () => middleware,
    requestTraceparent: (request) =>
      (request as RequestWithSpan)[SERVER_SPAN] ?? validTraceparent(request.headers.get("traceparent")),

    async commit(parent, run, describe) {
      if (tracingBenchSwitch.off) return run(parent);
      const span = begin(parent);
      try {
        const result = await run(span.traceparent);
        if (span.sampled) endCommit(span, describe ? describe(result) : NO_ATTRIBUTES);
        return result;
      } catch (error) {
        if (span.sampled) {
          const problem = error as { status?: unknown; message?: unknown };
          const attributes =
            typeof problem.status === "number" ? { "outboxd.problem_status": problem.status } : {};
          endCommit(span, attributes, String(problem.message ?? error));
        }
        throw error;
      }
    },

    async deliver(attempt, parent, run) {
      if (tracingBenchSwitch.off) return run(parent);
      const span = begin(parent);
      try {
        const result = await run(span.traceparent);
        if (span.sampled) endSend(span, attempt, result);
        return result;
      } catch (error) {
        if (span.sampled) endSend(span, attempt, { statusCode: null, error: String(error) });
        throw error;
      }
    },

    delivered(attempt, parent, startedAt, result) {
      const span = begin(parent);
      if (!span.sampled) return;
      span.startMs = startedAt;
      if (result.acked) endAttempt(span, INTERNAL_KIND, attempt, null, null, null);
      else endAttempt(span, INTERNAL_KIND, attempt, null, result.errorType, result.error);
    },

    shutdown: () => exporter.shutdown(),
  };
}

/**
 * A span begun: where its ids are (offsets into the strings that hold them: the parent's
 * traceparent, the pool of random hex), whether it is sampled, the traceparent naming it, its start.
 * Offsets, not id strings: writing an id is then a scan of a flat string.
 */
class Begun {
  readonly traceparent: string;
  startMs: number;

  constructor(
    /** Holds the trace id at `traceAt`, and the parent's span id at `parentAt` (-1: a root span). */
    readonly idSource: string,
    readonly traceAt: number,
    readonly parentAt: number,
    /** Holds this span's id at `spanAt`. */
    readonly spanSource: string,
    readonly spanAt: number,
    readonly sampled: boolean,
  ) {
    this.traceparent = `00-${idSource.slice(traceAt, traceAt + 32)}-${spanSource.slice(spanAt, spanAt + 16)}-${
      sampled ? "01" : "00"
    }`;
    this.startMs = sampled ? now() : 0;
  }
}

const SERVER_SPAN = Symbol("outboxd.serverSpan");
type RequestWithSpan = Request & { [SERVER_SPAN]?: string };

/**
 * Random lower-case hex ids from a pool: 4 KiB of crypto.getRandomValues turned into hex at once
 * (the SDK draws Math.random per byte, per id). drawId gives an id's offset in `hexPool` as it is
 * right after the call.
 */
const POOL_BYTES = 4096;
let hexPool = "";
let hexAt = 0;
function drawId(chars: 16 | 32): number {
  for (;;) {
    if (hexAt + chars > hexPool.length) {
      hexPool = Buffer.from(crypto.getRandomValues(new Uint8Array(POOL_BYTES))).toString("hex");
      hexAt = 0;
    }
    const at = hexAt;
    hexAt += chars;
    // An all-zero id is invalid (W3C): one chance in 2^64 at the least, drawn again.
    if (!hexPool.startsWith(ZEROS[chars], at)) return at;
  }
}
const ZEROS = { 16: "0".repeat(16), 32: "0".repeat(32) };

/** Now, as epoch milliseconds with the monotonic clock's fraction (the SDK's clock does the same). */
function now(): number {
  return TIME_ORIGIN + performance.now();
}
const TIME_ORIGIN = performance.timeOrigin;

/** An OTLP AnyValue for a number (the resource's attributes): intValue for integers, else doubleValue. */
function numberJson(value: number): string {
  if (Number.isInteger(value)) return `{"intValue":${value}}`;
  return `{"doubleValue":${Number.isFinite(value) ? value : `"${value}"`}}`;
}

/** OTLP JSON AnyValue of an attribute value (strings, numbers, booleans and arrays of them). */
function anyValueJson(value: unknown): string {
  switch (typeof value) {
    case "string":
      return `{"stringValue":${JSON.stringify(value)}}`;
    case "number":
      return numberJson(value);
    case "boolean":
      return `{"boolValue":${value}}`;
    default:
      if (Array.isArray(value)) return `{"arrayValue":{"values":[${value.map(anyValueJson).join(",")}]}}`;
      return `{"stringValue":${JSON.stringify(String(value))}}`;
  }
}

/** An attribute map as OTLP JSON KeyValues; undefined and null values are left out. */
function attributesJson(attributes: Record<string, unknown>): string {
  let json = "[";
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    if (json.length > 1) json += ",";
    json += `{"key":${JSON.stringify(key)},"value":${anyValueJson(value)}}`;
  }
  return `${json}]`;
}

/**
 * Whether a new span is sampled, given its parent's W3C flags (undefined: a root) and where its
 * trace id is (32 characters of `traceSource` from `traceAt`: cut out only if a ratio needs it).
 */
type Sampled = (parentFlags: number | undefined, traceSource: string, traceAt: number) => boolean;

/**
 * The sampler OTEL_TRACES_SAMPLER names (SDK environment specification), as the SDK's
 * buildSamplerFromEnv reads it: always_on, always_off, traceidratio and their parentbased_
 * forms (OTEL_TRACES_SAMPLER_ARG the ratio, default 1); anything else, or unset, is
 * parentbased_always_on. Parent-based: a span with a parent follows the parent's sampled flag.
 */
export function samplerFromEnv(env: Record<string, string | undefined>, warn: Warn): Sampled {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  const parentBased = name.startsWith("parentbased_");
  const root = parentBased ? name.slice("parentbased_".length) : name;
  let rootSampled: (traceSource: string, traceAt: number) => boolean;
  if (root === "always_on") rootSampled = () => true;
  else if (root === "always_off") rootSampled = () => false;
  else if (root === "traceidratio") {
    const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
    let ratio = arg ? Number(arg) : 1;
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
      warn("tracing: OTEL_TRACES_SAMPLER_ARG must be a ratio in [0, 1]; using 1", { value: arg });
      ratio = 1;
    }
    const sampler = new TraceIdRatioBasedSampler(ratio);
    rootSampled = (source, at) =>
      sampler.shouldSample(ROOT_CONTEXT, source.slice(at, at + 32)).decision !== 0;
  } else {
    warn("tracing: unknown OTEL_TRACES_SAMPLER; using parentbased_always_on", { value: name });
    return (parentFlags) => (parentFlags !== undefined ? (parentFlags & 1) === 1 : true);
  }
  if (!parentBased) return (_parentFlags, source, at) => rootSampled(source, at);
  return (parentFlags, source, at) =>
    parentFlags !== undefined ? (parentFlags & 1) === 1 : rootSampled(source, at);
}

/** The span's ids, up to its name. */
function writeIds(w: SpanWriter, span: Begun): void {
  w.raw(TRACE_ID);
  w.asciiAt(span.idSource, span.traceAt, 32);
  w.raw(SPAN_ID);
  w.asciiAt(span.spanSource, span.spanAt, 16);
  if (span.parentAt >= 0) {
    w.raw(PARENT_SPAN_ID);
    w.asciiAt(span.idSource, span.parentAt, 16);
  }
  w.raw(NAME);
}

/** After the name: the kind, the start and end times, and the opening of the attributes. */
function writeTimes(w: SpanWriter, kind: Uint8Array, startMs: number, endMs: number): void {
  w.raw(kind);
  w.nanos(startMs);
  w.raw(END_TIME);
  w.nanos(endMs);
  w.raw(ATTRIBUTES);
}

/** An AnyValue's opening and number: intValue for integers, doubleValue otherwise (not closed). */
function writeNumber(w: SpanWriter, value: number): void {
  if (Number.isInteger(value)) {
    w.raw(INT_VALUE);
    w.int(value);
  } else {
    w.raw(DOUBLE_VALUE);
    if (Number.isFinite(value)) w.ascii(String(value));
    else w.text(String(value));
  }
}

/** An attribute value as a whole OTLP AnyValue object. */
function writeAnyValue(w: SpanWriter, value: unknown): void {
  if (typeof value === "number") {
    writeNumber(w, value);
    w.byte(CLOSE_BRACE);
  } else if (typeof value === "boolean") {
    w.raw(value ? TRUE_VALUE : FALSE_VALUE);
  } else {
    w.raw(STRING_VALUE);
    w.text(String(value));
    w.byte(CLOSE_BRACE);
  }
}

const bytes = (text: string) => new TextEncoder().encode(text);
const TRACE_ID = bytes('{"traceId":"');
const SPAN_ID = bytes('","spanId":"');
const PARENT_SPAN_ID = bytes('","parentSpanId":"');
const NAME = bytes('","name":');
const COMMIT = bytes('"outboxd.commit"');
const DELIVER = bytes('"outboxd.deliver"');
// OTLP span kinds (the API's SpanKind + 1), each followed by the start time's key.
const INTERNAL_KIND = bytes(',"kind":1,"startTimeUnixNano":');
const SERVER_KIND = bytes(',"kind":2,"startTimeUnixNano":');
const CLIENT_KIND = bytes(',"kind":3,"startTimeUnixNano":');
const END_TIME = bytes(',"endTimeUnixNano":');
const ATTRIBUTES = bytes(',"attributes":[');
const KEY = bytes('{"key":"');
const NEXT_KEY = bytes(',{"key":"');
const VALUE = bytes('","value":');
const STRING_VALUE = bytes('{"stringValue":');
const INT_VALUE = bytes('{"intValue":');
const DOUBLE_VALUE = bytes('{"doubleValue":');
const TRUE_VALUE = bytes('{"boolValue":true}');
const FALSE_VALUE = bytes('{"boolValue":false}');
const ATTR_METHOD = bytes('{"key":"http.request.method","value":{"stringValue":');
const ATTR_PATH = bytes('}},{"key":"url.path","value":{"stringValue":');
const ATTR_STATUS_CODE_NEXT = bytes('}},{"key":"http.response.status_code","value":{"intValue":');
const ATTR_ROUTE = bytes('}},{"key":"http.route","value":{"stringValue":');
const ATTR_EVENT_ID = bytes('{"key":"outboxd.event_id","value":{"stringValue":');
const ATTR_ENDPOINT_ID = bytes('}},{"key":"outboxd.endpoint_id","value":{"stringValue":');
const ATTR_AGGREGATE = bytes('}},{"key":"outboxd.aggregate","value":{"stringValue":');
const ATTR_SEQUENCE = bytes('}},{"key":"outboxd.sequence","value":');
const ATTR_ATTEMPT = bytes('}},{"key":"outboxd.attempt","value":');
const ATTR_STATUS_CODE = bytes(',{"key":"http.response.status_code","value":{"intValue":');
const ATTR_ERROR_TYPE = bytes(',{"key":"error.type","value":{"stringValue":"');
const CLOSE_VALUE = bytes("}}");
const CLOSE_STRING_VALUE = bytes('"}}');
// After the attributes: the status, then the key of the flags (W3C sampled flag: written after).
const END_UNSET = bytes('],"status":{},"flags":');
const END_ERROR = bytes('],"status":{"code":2},"flags":');
const END_ERROR_MESSAGE = bytes('],"status":{"code":2,"message":');
const CLOSE_STATUS = bytes('},"flags":');
const QUOTE = 34;
const SPACE = 32;
const ONE = 49;
const CLOSE_BRACE = 125;
const NO_ATTRIBUTES: Record<string, never> = {};
