// The OpenTelemetry SDK behind src/ops/tracing.ts, imported only when tracing is on. Spans go
// through a BatchSpanProcessor (bounded queue: OTEL_BSP_MAX_QUEUE_SIZE, default 2048; spans
// beyond it are dropped, never held in memory) to the OTLP/HTTP JSON exporter. The exporter
// reads its other standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, …), the
// provider its sampler and limits (OTEL_TRACES_SAMPLER, default parent-based always-on).
//
// No context manager is installed: every span is started with its parent context given
// explicitly (the request's traceparent, the commit's stored one), so nothing depends on
// AsyncLocalStorage and nothing global changes but the diagnostic logger.
import {
  type Attributes,
  type Context,
  DiagLogLevel,
  diag,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
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

export function otelTracing(
  settings: TracingSettings,
  warn: (message: string, fields: Record<string, unknown>) => void,
): Tracing {
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
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }))],
  });
  const tracer = provider.getTracer("outboxd", packageJson.version);
  /** The server span's traceparent per request, for the commit route (requestTraceparent). */
  const requestSpans = new WeakMap<Request, string>();

  const middleware: MiddlewareHandler = async (c, next) => {
    const method = c.req.method;
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": method, "url.path": c.req.path },
      },
      parentContext(c.req.header("traceparent")),
    );
    requestSpans.set(c.req.raw, traceparentOf(span));
    try {
      await next();
    } finally {
      const route = routePath(c);
      if (route && route !== "*" && route !== "/*") {
        span.updateName(`${method} ${route}`);
        span.setAttribute("http.route", route);
      }
      const status = c.res.status;
      span.setAttribute("http.response.status_code", status);
      // Server spans: 4xx is the caller's doing, only 5xx marks the span as failed (semconv).
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };

  let stopped: Promise<void> | null = null;
  return {
    enabled: true,
    middleware: () => middleware,
    requestTraceparent: (request) =>
      requestSpans.get(request) ?? validTraceparent(request.headers.get("traceparent")),

    async commit(parent, run, describe) {
      const span = tracer.startSpan("outboxd.commit", { kind: SpanKind.INTERNAL }, parentContext(parent));
      try {
        const result = await run(traceparentOf(span));
        if (describe) span.setAttributes(describe(result));
        return result;
      } catch (error) {
        const problem = error as { status?: unknown; message?: unknown };
        if (typeof problem.status === "number") span.setAttribute("outboxd.problem_status", problem.status);
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(problem.message ?? error) });
        throw error;
      } finally {
        span.end();
      }
    },

    async deliver(attempt, parent, run) {
      const span = tracer.startSpan(
        "outboxd.deliver",
        { kind: SpanKind.CLIENT, attributes: attemptAttributes(attempt) },
        parentContext(parent),
      );
      try {
        const result = await run(traceparentOf(span));
        endAttempt(span, result);
        return result;
      } catch (error) {
        endAttempt(span, { statusCode: null, error: String(error) });
        throw error;
      }
    },

    delivered(attempt, parent, startedAt, result) {
      const span = tracer.startSpan(
        "outboxd.deliver",
        { kind: SpanKind.INTERNAL, attributes: attemptAttributes(attempt), startTime: startedAt },
        parentContext(parent),
      );
      endAttempt(span, result);
    },

    shutdown() {
      stopped ??= provider
        .shutdown()
        .catch((error) => warn("tracing: shutdown failed", { error: String(error) }));
      return stopped;
    },
  };
}

function attemptAttributes(attempt: DeliverAttempt): Attributes {
  return {
    "outboxd.event_id": attempt.eventId,
    "outboxd.endpoint_id": attempt.endpointId,
    "outboxd.aggregate": attempt.aggregate,
    "outboxd.sequence": attempt.sequence,
    "outboxd.attempt": attempt.attempt,
  };
}

function endAttempt(span: Span, result: AttemptResult): void {
  if (result.statusCode !== null) span.setAttribute("http.response.status_code", result.statusCode);
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  if (!ok) {
    span.setAttribute("error.type", result.statusCode !== null ? String(result.statusCode) : "send_failed");
    span.setStatus({ code: SpanStatusCode.ERROR, ...(result.error ? { message: result.error } : {}) });
  }
  span.end();
}

/** The context whose span is the remote parent named by a valid traceparent; else a new trace. */
function parentContext(traceparent: string | null | undefined): Context {
  const valid = validTraceparent(traceparent);
  if (valid === undefined) return ROOT_CONTEXT;
  const [, traceId = "", spanId = "", flags = "00"] = valid.split("-");
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  });
}

/** The W3C traceparent naming `span` (what children, stored events and webhooks carry). */
function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags & TraceFlags.SAMPLED ? "01" : "00"}`;
}
