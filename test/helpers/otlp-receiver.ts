// A real OTLP/HTTP trace receiver on 127.0.0.1, port 0: it accepts what outboxd's exporter
// POSTs to /v1/traces (OTLP JSON, the only protocol outboxd speaks) and decodes every span.
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
  /** Start and end, nanoseconds since the epoch, as the decimal strings OTLP JSON carries. */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  /** Resource attributes of the batch it came in (service.name …). */
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the export requests received. */
  contentTypes: string[];
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
}
interface OtlpExport {
  resourceSpans: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans: { spans: OtlpSpan[] }[];
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
  const receiver: OtlpReceiver = { url: "", spans: [], contentTypes: [], stop: async () => {} };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method !== "POST" || path !== "/v1/traces")
        return new Response("not found", { status: 404 });
      receiver.contentTypes.push(request.headers.get("content-type") ?? "");
      const body = (await request.json()) as OtlpExport;
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
              resource,
            });
          }
        }
      }
      return Response.json({ partialSuccess: {} });
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}`;
  receiver.stop = async () => {
    await server.stop(true);
  };
  return receiver;
}
