// The OpenTelemetry SDK behind src/ops/tracing.ts, imported only when tracing is on. Spans go
// through the SDK's BatchSpanProcessor (bounded queue: OTEL_BSP_MAX_QUEUE_SIZE, default 2048;
// spans beyond it are dropped, never held in memory) to the OTLP/HTTP JSON exporter, which reads
// its other standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, …).
//
// outboxd records only its own three spans (the server span, outboxd.commit, outboxd.deliver),
// each begun and ended in one place, so it builds them as plain finished records (SpanRecord,
// the ReadableSpan the processor and exporter read) instead of the SDK's Tracer and Span: a
// recorded SDK Span (limits, events, links, a clock per span, its context objects) cost about a
// quarter of a commit's CPU in allocation and garbage collection (docs/benchmarks.md), a record
// a fraction of that. The sampling decision is the SDK's rule read from OTEL_TRACES_SAMPLER
// (default parentbased_always_on); a span not sampled records nothing, but still gets its ids
// so the traceparent passed on names it (flags 00), as the SDK's non-recording span does.
//
// No context manager is installed: every span's parent is given explicitly (the request's
// traceparent, the commit's stored one), so nothing depends on AsyncLocalStorage and nothing
// global changes but the diagnostic logger.
import {
  type Attributes,
  DiagLogLevel,
  diag,
  type HrTime,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  type SpanStatus,
  SpanStatusCode,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  detectResources,
  envDetector,
  type Resource,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  RandomIdGenerator,
  type ReadableSpan,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
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

type Warn = (message: string, fields: Record<string, unknown>) => void;

export function otelTracing(settings: TracingSettings, warn: Warn): Tracing {
  // Export failures (collector down, refused) go to outboxd's log instead of nowhere.
  diag.setLogger(
    {
      error: (message, ...args) => warn("tracing: export problem", { message, detail: args.map(String) }),
      warn: (message, ...args) => warn("tracing: export problem", { message, detail: args.map(String) }),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({ "service.name": settings.serviceName, "service.version": packageJson.version }),
  );
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }));
  const scope = { name: "outboxd", version: packageJson.version };
  const sampled = samplerFromEnv(process.env, warn);
  const ids = new RandomIdGenerator();

  /** A new span's context under `parent` (a traceparent, or none: a new trace), sampled or not. */
  function begin(parent: string | null | undefined): Begun {
    const remote = parseTraceparent(parent);
    const traceId = remote?.traceId ?? ids.generateTraceId();
    const spanId = ids.generateSpanId();
    const isSampled = sampled(remote, traceId);
    return {
      context: { traceId, spanId, traceFlags: isSampled ? 1 : 0 },
      parent: remote,
      traceparent: `00-${traceId}-${spanId}-${isSampled ? "01" : "00"}`,
      startTime: isSampled ? now() : NO_TIME,
    };
  }

  function end(
    begun: Begun,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    status: SpanStatus = UNSET,
    endTime: HrTime = now(),
  ): void {
    processor.onEnd(
      new SpanRecord(
        name,
        kind,
        begun.context,
        begun.parent,
        begun.startTime,
        endTime,
        status,
        attributes,
        resource,
        scope,
      ),
    );
  }

  /** The server span's traceparent per request, for the commit route (requestTraceparent). */
  const middleware: MiddlewareHandler = async (c, next) => {
    const begun = begin(c.req.raw.headers.get("traceparent"));
    (c.req.raw as RequestWithSpan)[SERVER_SPAN] = begun.traceparent;
    try {
      await next();
    } finally {
      if (begun.context.traceFlags) {
        const method = c.req.method;
        const status = c.res.status;
        const route = routePath(c);
        const named = route && route !== "*" && route !== "/*";
        const attributes: Attributes = {
          "http.request.method": method,
          "url.path": c.req.path,
          "http.response.status_code": status,
        };
        if (named) attributes["http.route"] = route;
        // Server spans: 4xx is the caller's doing, only 5xx marks the span as failed (semconv).
        end(
          begun,
          named ? `${method} ${route}` : method,
          SpanKind.SERVER,
          attributes,
          status >= 500 ? ERROR : UNSET,
        );
      }
    }
  };

  function endAttempt(
    begun: Begun,
    kind: SpanKind,
    attempt: DeliverAttempt,
    result: AttemptResult,
    endTime?: HrTime,
  ) {
    const attributes: Attributes = {
      "outboxd.event_id": attempt.eventId,
      "outboxd.endpoint_id": attempt.endpointId,
      "outboxd.aggregate": attempt.aggregate,
      "outboxd.sequence": attempt.sequence,
      "outboxd.attempt": attempt.attempt,
    };
    if (result.statusCode !== null) attributes["http.response.status_code"] = result.statusCode;
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    if (ok) return end(begun, "outboxd.deliver", kind, attributes, UNSET, endTime);
    attributes["error.type"] = result.statusCode !== null ? String(result.statusCode) : "send_failed";
    const status = result.error ? { code: SpanStatusCode.ERROR, message: result.error } : ERROR;
    end(begun, "outboxd.deliver", kind, attributes, status, endTime);
  }

  let stopped: Promise<void> | null = null;
  return {
    enabled: true,
    middleware: () => middleware,
    requestTraceparent: (request) =>
      (request as RequestWithSpan)[SERVER_SPAN] ?? validTraceparent(request.headers.get("traceparent")),

    async commit(parent, run, describe) {
      const begun = begin(parent);
      try {
        const result = await run(begun.traceparent);
        if (begun.context.traceFlags) {
          end(begun, "outboxd.commit", SpanKind.INTERNAL, describe ? describe(result) : {});
        }
        return result;
      } catch (error) {
        if (begun.context.traceFlags) {
          const problem = error as { status?: unknown; message?: unknown };
          const attributes: Attributes = {};
          if (typeof problem.status === "number") attributes["outboxd.problem_status"] = problem.status;
          const status = { code: SpanStatusCode.ERROR, message: String(problem.message ?? error) };
          end(begun, "outboxd.commit", SpanKind.INTERNAL, attributes, status);
        }
        throw error;
      }
    },

    async deliver(attempt, parent, run) {
      const begun = begin(parent);
      try {
        const result = await run(begun.traceparent);
        if (begun.context.traceFlags) endAttempt(begun, SpanKind.CLIENT, attempt, result);
        return result;
      } catch (error) {
        if (begun.context.traceFlags)
          endAttempt(begun, SpanKind.CLIENT, attempt, { statusCode: null, error: String(error) });
        throw error;
      }
    },

    delivered(attempt, parent, startedAt, result) {
      const begun = begin(parent);
      if (!begun.context.traceFlags) return;
      begun.startTime = millisToHrTime(startedAt);
      endAttempt(begun, SpanKind.INTERNAL, attempt, result);
    },

    shutdown() {
      stopped ??= processor
        .shutdown()
        .catch((error) => warn("tracing: shutdown failed", { error: String(error) }));
      return stopped;
    },
  };
}

/** A span begun: its context, its parent's, the traceparent naming it, and when it began. */
interface Begun {
  context: SpanContext;
  parent: SpanContext | undefined;
  traceparent: string;
  startTime: HrTime;
}

const SERVER_SPAN = Symbol("outboxd.serverSpan");
type RequestWithSpan = Request & { [SERVER_SPAN]?: string };

const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };
const ERROR: SpanStatus = { code: SpanStatusCode.ERROR };
const NO_TIME: HrTime = [0, 0];
const NONE: never[] = [];

/**
 * One finished span, as the batch processor and the OTLP exporter read it (ReadableSpan). Built
 * once at the span's end; nothing in it changes afterwards. Events and links: none.
 */
class SpanRecord implements ReadableSpan {
  readonly links = NONE;
  readonly events = NONE;
  readonly ended = true;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly startTime: HrTime,
    readonly endTime: HrTime,
    readonly status: SpanStatus,
    readonly attributes: Attributes,
    readonly resource: Resource,
    readonly instrumentationScope: { name: string; version: string },
  ) {}

  spanContext(): SpanContext {
    return this.context;
  }

  get duration(): HrTime {
    const nanos = (this.endTime[0] - this.startTime[0]) * 1e9 + (this.endTime[1] - this.startTime[1]);
    return [Math.floor(nanos / 1e9), nanos % 1e9];
  }
}

/** The remote parent a valid traceparent names, or undefined (a new trace starts). */
function parseTraceparent(traceparent: string | null | undefined): SpanContext | undefined {
  const valid = validTraceparent(traceparent);
  if (valid === undefined) return undefined;
  return {
    traceId: valid.slice(3, 35),
    spanId: valid.slice(36, 52),
    traceFlags: Number.parseInt(valid.slice(53, 55), 16) & 1,
    isRemote: true,
  };
}

/** Now as the exporter's HrTime (epoch seconds and nanoseconds), as the SDK's clock does. */
function now(): HrTime {
  return millisToHrTime(performance.timeOrigin + performance.now());
}

function millisToHrTime(epochMillis: number): HrTime {
  const seconds = Math.trunc(epochMillis / 1000);
  return [seconds, Math.round((epochMillis - seconds * 1000) * 1e6)];
}

/** Whether a new span is sampled, given its parent (if any) and trace id. */
type Sampled = (parent: SpanContext | undefined, traceId: string) => boolean;

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
  let rootSampled: (traceId: string) => boolean;
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
    rootSampled = (traceId) => sampler.shouldSample(ROOT_CONTEXT, traceId).decision !== 0;
  } else {
    warn("tracing: unknown OTEL_TRACES_SAMPLER; using parentbased_always_on", { value: name });
    return (parent) => (parent ? (parent.traceFlags & 1) === 1 : true);
  }
  if (!parentBased) return (_parent, traceId) => rootSampled(traceId);
  return (parent, traceId) => (parent ? (parent.traceFlags & 1) === 1 : rootSampled(traceId));
}
