// Tracing on, behind src/ops/tracing.ts and imported only when tracing is on: outboxd's three
// spans (the server span, outboxd.commit, outboxd.deliver) exported over OTLP/HTTP, as protobuf
// (the OTLP default) or JSON (OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL=http/json).
//
// Each span is begun and ended in one place, so it is never an object the rest of outboxd holds:
// `begin` gives its ids, its parent's and the traceparent naming it; at its end the span is
// written at once into the bytes of the next export request (./tracing-export.ts). The
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
import type { Context } from "hono";
import { routePath } from "hono/route";
import packageJson from "../../package.json" with { type: "json" };
import {
  type AttemptResult,
  type CommitSummary,
  type DeliveryNames,
  type OpenSpan,
  type Tracing,
  type TracingSettings,
  validTraceparent,
} from "./tracing.ts";
import {
  AttributeKey,
  CLIENT,
  exportSettings,
  INTERNAL,
  otlpExporter,
  SERVER,
  type SpanIds,
} from "./tracing-export.ts";
import { otlpJson } from "./tracing-otlp-json.ts";
import { otlpProto } from "./tracing-otlp-proto.ts";

type Warn = (message: string, fields: Record<string, unknown>) => void;

/**
 * For the benches only (bench/probe/tracing-switch.ts, tracing-cpu.ts): while `off`, a process
 * with tracing on says it is not `enabled`, so its callers take their untraced paths as with
 * NO_TRACING, and one process can alternate blocks of commits with and without spans (the same
 * heap, JIT state and machine load for both).
 */
export const tracingBenchSwitch = { off: false };

export function otelTracing(settings: TracingSettings, warn: Warn): Tracing {
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({ "service.name": settings.serviceName, "service.version": packageJson.version }),
  );
  const scope = { name: "outboxd", version: packageJson.version };
  const format =
    settings.protocol === "http/json"
      ? otlpJson(resource.attributes, scope)
      : otlpProto(resource.attributes, scope);
  const exporter = otlpExporter(
    exportSettings(settings.tracesUrl, process.env, warn),
    format,
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

  /** A server span: method, path, status and route (its name), once the response is set. */
  function endServer(span: Begun, c: Context) {
    const endMs = now();
    const w = exporter.span();
    if (w === null) return;
    const method = c.req.method;
    const status = c.res.status;
    const route = routePath(c);
    const named = route && route !== "*" && route !== "/*";
    w.head(span, method, named ? route : null, SERVER, span.startMs, endMs);
    w.string(HTTP_METHOD, method);
    w.string(URL_PATH, c.req.path);
    w.number(HTTP_STATUS_CODE, status);
    if (named) w.string(HTTP_ROUTE, route);
    // Server spans: 4xx is the caller's doing, only 5xx marks the span as failed (semconv).
    w.end(status >= 500, null, spanFlags(span));
  }

  /** A webhook send's span: its status code when an answer came; failed unless 2xx. */
  function endSend(span: Begun, delivery: DeliveryNames, attempt: number, result: AttemptResult) {
    const code = result.statusCode;
    const ok = code !== null && code >= 200 && code < 300;
    endAttempt(
      span,
      CLIENT,
      delivery,
      attempt,
      code,
      ok ? null : code === null ? "send_failed" : String(code),
      result.error,
    );
  }

  /**
   * An outboxd.deliver span: the attempt's attributes, its status code if any, and for a failed
   * attempt `error.type` (`failure`) and status ERROR with `message` when there is one.
   */
  function endAttempt(
    span: Begun,
    kind: number,
    delivery: DeliveryNames,
    attempt: number,
    code: number | null,
    failure: string | null,
    message: string | null,
  ) {
    const endMs = now();
    const w = exporter.span();
    if (w === null) return;
    w.head(span, "outboxd.deliver", null, kind, span.startMs, endMs);
    w.string(EVENT_ID, delivery.eventId);
    w.string(ENDPOINT_ID, delivery.endpointId);
    w.string(AGGREGATE, delivery.aggregate);
    w.number(SEQUENCE, delivery.sequence);
    w.number(ATTEMPT, attempt);
    if (code !== null) w.number(HTTP_STATUS_CODE, code);
    if (failure !== null) w.string(ERROR_TYPE, failure);
    w.end(failure !== null, failure !== null && message ? message : null, SAMPLED);
  }

  /** An outboxd.commit span: the commit's id and counts, or the problem it failed with. */
  function endCommit(
    span: Begun,
    outcome: CommitSummary | null,
    problemStatus: number | null,
    error: string | null,
  ) {
    const endMs = now();
    const w = exporter.span();
    if (w === null) return;
    w.head(span, "outboxd.commit", null, INTERNAL, span.startMs, endMs);
    if (outcome !== null) {
      w.string(COMMIT_ID, outcome.result.commitId);
      w.number(EVENTS, outcome.result.events.length);
      w.number(DELIVERIES, outcome.deliveries);
      w.bool(REPLAYED, outcome.replayed);
    }
    if (problemStatus !== null) w.number(PROBLEM_STATUS, problemStatus);
    w.end(error !== null, error, SAMPLED);
  }

  return {
    // Read at every span (bench/probe/tracing-switch.ts switches it): callers check it first.
    get enabled() {
      return !tracingBenchSwitch.off;
    },

    serverBegun(request) {
      const span = begin(request.headers.get("traceparent"));
      (request as RequestWithSpan)[SERVER_SPAN] = span;
      return span.sampled ? span : null;
    },
    serverEnded: (span, c) => endServer(span as Begun, c),
    requestTraceparent: (request) =>
      (request as RequestWithSpan)[SERVER_SPAN]?.traceparent ??
      validTraceparent(request.headers.get("traceparent")),

    commitBegun: begin,
    commitEnded(span, outcome) {
      if ((span as Begun).sampled) endCommit(span as Begun, outcome, null, null);
    },
    commitFailed(span, error) {
      if (!(span as Begun).sampled) return;
      const problem = error as { status?: unknown; message?: unknown } | null;
      const status = typeof problem?.status === "number" ? problem.status : null;
      endCommit(span as Begun, null, status, String(problem?.message ?? error));
    },

    deliverBegun: begin,
    deliverEnded(span, delivery, attempt, result) {
      if ((span as Begun).sampled) endSend(span as Begun, delivery, attempt, result);
    },

    delivered(attempt, parent, startedAt, result) {
      const span = begin(parent);
      if (!span.sampled) return;
      span.startMs = startedAt;
      if (result.acked) endAttempt(span, INTERNAL, attempt, attempt.attempt, null, null, null);
      else endAttempt(span, INTERNAL, attempt, attempt.attempt, null, result.errorType, result.error);
    },

    shutdown: () => exporter.shutdown(),
  };
}

/** OTLP span flags: the W3C sampled flag; a server span's also say whether its parent is remote. */
const SAMPLED = 0x1;
function spanFlags(span: Begun): number {
  return span.parentAt < 0 ? 0x101 : 0x301;
}

/**
 * A span begun: where its ids are (offsets into the strings that hold them: the parent's
 * traceparent, the pool of random hex), whether it is sampled, its start, and the traceparent
 * naming it, made when first read (a server span's only when a route asks: commits, proposals).
 * Offsets, not id strings: writing an id is then a scan of a flat string.
 */
class Begun implements SpanIds, OpenSpan {
  startMs: number;
  #traceparent: string | null = null;

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
    this.startMs = sampled ? now() : 0;
  }

  get traceparent(): string {
    this.#traceparent ??= `00-${this.idSource.slice(this.traceAt, this.traceAt + 32)}-${this.spanSource.slice(
      this.spanAt,
      this.spanAt + 16,
    )}-${this.sampled ? "01" : "00"}`;
    return this.#traceparent;
  }
}

const SERVER_SPAN = Symbol("outboxd.serverSpan");
type RequestWithSpan = Request & { [SERVER_SPAN]?: Begun };

/**
 * Random lower-case hex ids from a pool: 4 KiB of crypto.getRandomValues turned into hex at once
 * (the SDK draws Math.random per byte, per id). drawId gives an id's offset in `hexPool` as it is
 * right after the call.
 */
const POOL = Buffer.alloc(4096);
let hexPool = "";
let hexAt = 0;
function drawId(chars: 16 | 32): number {
  for (;;) {
    if (hexAt + chars > hexPool.length) {
      // Into the same buffer each time: a new typed array per refill is a malloc and a free.
      hexPool = crypto.getRandomValues(POOL).toString("hex");
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

/** Attribute keys, each encoded once per format (./tracing-export.ts AttributeKey). */
const HTTP_METHOD = new AttributeKey("http.request.method");
const URL_PATH = new AttributeKey("url.path");
const HTTP_STATUS_CODE = new AttributeKey("http.response.status_code");
const HTTP_ROUTE = new AttributeKey("http.route");
const EVENT_ID = new AttributeKey("outboxd.event_id");
const ENDPOINT_ID = new AttributeKey("outboxd.endpoint_id");
const AGGREGATE = new AttributeKey("outboxd.aggregate");
const SEQUENCE = new AttributeKey("outboxd.sequence");
const ATTEMPT = new AttributeKey("outboxd.attempt");
const ERROR_TYPE = new AttributeKey("error.type");
const COMMIT_ID = new AttributeKey("outboxd.commit_id");
const EVENTS = new AttributeKey("outboxd.events");
const DELIVERIES = new AttributeKey("outboxd.deliveries");
const REPLAYED = new AttributeKey("outboxd.replayed");
const PROBLEM_STATUS = new AttributeKey("outboxd.problem_status");
