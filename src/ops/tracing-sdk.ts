// Tracing on, behind src/ops/tracing.ts and imported only when tracing is on: outboxd's three
// spans (the server span, outboxd.commit, outboxd.deliver) made with the OpenTelemetry SDK and
// exported by its OTLP/HTTP exporter (protobuf, OTLP's default, or JSON) through a
// BatchSpanProcessor. Everything else is the SDK's, read from the standard variables: the sampler
// (OTEL_TRACES_SAMPLER, _ARG), the batch queue (OTEL_BSP_*), the exporter's headers, timeout,
// compression and certificates (OTEL_EXPORTER_OTLP_[TRACES_]*), the resource
// (OTEL_RESOURCE_ATTRIBUTES). A span not sampled records nothing but still has its ids, so the
// traceparent passed on names it (flags 00).
//
// No context manager: every span's parent is given explicitly (the request's traceparent, the
// commit's stored one), so nothing depends on AsyncLocalStorage and nothing global changes but
// the SDK's diagnostic logger (its export errors become `warn` lines).
import {
  type Attributes,
  DiagLogLevel,
  diag,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { Context } from "hono";
import { routePath } from "hono/route";
import packageJson from "../../package.json" with { type: "json" };
import {
  type AttemptResult,
  type CommitSummary,
  type DeliveryNames,
  type OpenSpan,
  type TraceParent,
  type Tracing,
  type TracingSettings,
  validTraceparent,
} from "./tracing.ts";

type Warn = (message: string, fields: Record<string, unknown>) => void;

/**
 * For the benches only (bench/probe/tracing-switch.ts): while `off`, a process with tracing on
 * says it is not `enabled`, so its callers take their untraced paths as with NO_TRACING, and one
 * process can alternate blocks of commits with and without spans.
 */
export const tracingBenchSwitch = { off: false };

/** A span begun by a hook: the SDK's span and the traceparent naming it (made when first read). */
class Begun implements OpenSpan {
  #traceparent: string | null = null;
  constructor(readonly span: Span) {}

  get traceparent(): string {
    if (this.#traceparent === null) {
      const { traceId, spanId, traceFlags } = this.span.spanContext();
      this.#traceparent = `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? "01" : "00"}`;
    }
    return this.#traceparent;
  }
}

export function otelTracing(settings: TracingSettings, warn: Warn): Tracing {
  // The SDK reports failed exports through its diagnostic logger; they become warn lines.
  const report = (message: string, args: unknown[]) =>
    warn(`tracing: ${readable(message)}`, details(message, args));
  diag.setLogger(
    {
      error: (message, ...args) => report(message, args),
      warn: (message, ...args) => report(message, args),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({ "service.name": settings.serviceName, "service.version": packageJson.version }),
  );
  const exporter =
    settings.protocol === "http/json"
      ? new JsonExporter({ url: settings.tracesUrl })
      : new ProtoExporter({ url: settings.tracesUrl });
  // The sampler is the SDK's from OTEL_TRACES_SAMPLER (default parentbased_always_on); the batch
  // processor's queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE, 2048: beyond it new spans are dropped).
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  const tracer: Tracer = provider.getTracer("outboxd", packageJson.version);

  function begin(
    name: string,
    kind: SpanKind,
    parent: TraceParent | null | undefined,
    startTime?: number,
  ): Begun {
    return new Begun(tracer.startSpan(name, { kind, startTime }, parentContext(parent)));
  }

  /**
   * An outboxd.deliver span's end: the attempt's attributes, its status code if any, and for a
   * failed attempt `error.type` (`failure`) and status ERROR with `message` when there is one.
   */
  function endAttempt(
    span: Span,
    delivery: DeliveryNames,
    attempt: number,
    code: number | null,
    failure: string | null,
    message: string | null,
  ) {
    const attributes: Attributes = {
      "outboxd.event_id": delivery.eventId,
      "outboxd.endpoint_id": delivery.endpointId,
      "outboxd.aggregate": delivery.aggregate,
      "outboxd.sequence": delivery.sequence,
      "outboxd.attempt": attempt,
    };
    if (code !== null) attributes["http.response.status_code"] = code;
    if (failure !== null) {
      attributes["error.type"] = failure;
      span.setStatus(message ? { code: SpanStatusCode.ERROR, message } : { code: SpanStatusCode.ERROR });
    }
    span.setAttributes(attributes);
    span.end();
  }

  /** An outboxd.commit span's end: the commit's id and counts, or the problem it failed with. */
  function endCommit(
    span: Span,
    outcome: CommitSummary | null,
    problemStatus: number | null,
    error: string | null,
  ) {
    if (outcome !== null)
      span.setAttributes({
        "outboxd.commit_id": outcome.result.commitId,
        "outboxd.events": outcome.result.events.length,
        "outboxd.deliveries": outcome.deliveries,
        "outboxd.replayed": outcome.replayed,
      });
    if (problemStatus !== null) span.setAttribute("outboxd.problem_status", problemStatus);
    if (error !== null) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end();
  }

  return {
    // Read at every span (bench/probe/tracing-switch.ts switches it): callers check it first.
    get enabled() {
      return !tracingBenchSwitch.off;
    },

    serverBegun(request) {
      // Named by its method until the route is known (serverEnded).
      const begun = begin(request.method, SpanKind.SERVER, request.headers.get("traceparent"));
      (request as RequestWithSpan)[SERVER_SPAN] = begun;
      return begun.span.isRecording() ? begun : null;
    },
    serverEnded(open, c: Context) {
      const { span } = open as Begun;
      const method = c.req.method;
      const status = c.res.status;
      const route = routePath(c);
      const named = route && route !== "*" && route !== "/*";
      if (named) span.updateName(`${method} ${route}`);
      span.setAttributes({
        "http.request.method": method,
        "url.path": c.req.path,
        "http.response.status_code": status,
        ...(named ? { "http.route": route } : {}),
      });
      // Server spans: 4xx is the caller's doing, only 5xx marks the span as failed (semconv).
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
    requestTraceparent: (request) =>
      (request as RequestWithSpan)[SERVER_SPAN] ?? validTraceparent(request.headers.get("traceparent")),

    commitBegun: (parent) => begin("outboxd.commit", SpanKind.INTERNAL, parent),
    commitEnded(open, outcome) {
      const { span } = open as Begun;
      if (span.isRecording()) endCommit(span, outcome, null, null);
    },
    commitFailed(open, error) {
      const { span } = open as Begun;
      if (!span.isRecording()) return;
      const problem = error as { status?: unknown; message?: unknown } | null;
      const status = typeof problem?.status === "number" ? problem.status : null;
      endCommit(span, null, status, String(problem?.message ?? error));
    },

    deliverBegun: (parent) => begin("outboxd.deliver", SpanKind.CLIENT, parent),
    deliverEnded(open, delivery, attempt, result: AttemptResult) {
      const { span } = open as Begun;
      if (!span.isRecording()) return;
      const code = result.statusCode;
      const ok = code !== null && code >= 200 && code < 300;
      endAttempt(
        span,
        delivery,
        attempt,
        code,
        ok ? null : code === null ? "send_failed" : String(code),
        result.error,
      );
    },

    delivered(attempt, parent, startedAt, result) {
      const { span } = begin("outboxd.deliver", SpanKind.INTERNAL, parent, startedAt);
      if (!span.isRecording()) return;
      if (result.acked) endAttempt(span, attempt, attempt.attempt, null, null, null);
      else endAttempt(span, attempt, attempt.attempt, null, result.errorType, result.error);
    },

    // Exports what is queued (within OTEL_BSP_EXPORT_TIMEOUT); a failure is a warning, not a throw.
    shutdown: () =>
      provider.shutdown().catch((error) =>
        warn("tracing: the last spans could not be exported", {
          error: readable(String((error as Error)?.message ?? error)),
        }),
      ),
  };
}

/**
 * The SDK reports a failed export as the error's JSON (its stringifyException): the line gets the
 * error's message, and its code when it has one; any other message is kept as it is.
 */
function readable(message: string): string {
  const error = parsedError(message);
  return error?.message ?? message;
}

function details(message: string, args: unknown[]): Record<string, unknown> {
  const error = parsedError(message);
  return {
    ...(error?.code ? { code: error.code } : {}),
    ...(args.length > 0 ? { details: String(args) } : {}),
  };
}

function parsedError(message: string): { message?: string; code?: string } | null {
  if (!message.startsWith("{")) return null;
  try {
    const parsed = JSON.parse(message) as { message?: unknown; code?: unknown };
    return {
      ...(typeof parsed.message === "string" ? { message: parsed.message } : {}),
      ...(typeof parsed.code === "string" ? { code: parsed.code } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * The context of a span begun here (the request's server span: no traceparent written out and
 * parsed again), of a valid W3C traceparent (a remote parent), or the root context: a new trace.
 */
function parentContext(parent: TraceParent | null | undefined) {
  if (parent instanceof Begun) return trace.setSpan(ROOT_CONTEXT, parent.span);
  const valid = validTraceparent(parent as string | null | undefined);
  if (valid === undefined) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: valid.slice(3, 35),
    spanId: valid.slice(36, 52),
    traceFlags: Number.parseInt(valid.slice(53, 55), 16),
    isRemote: true,
  });
}

const SERVER_SPAN = Symbol("outboxd.serverSpan");
type RequestWithSpan = Request & { [SERVER_SPAN]?: Begun };
