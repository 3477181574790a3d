// An OTLP/HTTP trace sink for the tracing bench: accepts what outboxd's exporter POSTs to
// /v1/traces (OTLP protobuf or JSON), counts the spans and answers 200, as a collector would.
//
//   PORT=0 npx bun bench/peers/otlp-sink.ts       prints {"listening": "http://127.0.0.1:N"}
// HTTP: GET /count → {"spans", "exports", "bytes"}; POST /v1/traces → an empty success.
const PORT = Number(process.env.PORT ?? 0);
let spans = 0;
let batches = 0;
let bytes = 0;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: PORT,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (request.method === "GET" && path === "/count")
      return Response.json({ spans, exports: batches, bytes });
    if (request.method !== "POST" || path !== "/v1/traces") return new Response("not found", { status: 404 });
    // Counting is enough here and far cheaper than decoding (the sink shares the CPU).
    const body = new Uint8Array(await request.arrayBuffer());
    bytes += body.length;
    batches += 1;
    if (request.headers.get("content-type") === "application/x-protobuf") {
      spans += countProtobufSpans(body);
      return new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } });
    }
    const text = new TextDecoder().decode(body);
    for (let at = text.indexOf('"spanId"'); at !== -1; at = text.indexOf('"spanId"', at + 8)) spans += 1;
    return Response.json({ partialSuccess: {} });
  },
});
console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }));

/** Spans in an ExportTraceServiceRequest: resource_spans (1) → scope_spans (2) → spans (2). */
function countProtobufSpans(body: Uint8Array): number {
  let count = 0;
  /** Calls `each` with the start and end of every length-delimited field `wanted` in [from, to). */
  const fields = (from: number, to: number, wanted: number, each: (start: number, end: number) => void) => {
    let at = from;
    const varint = () => {
      let value = 0;
      for (let scale = 1; ; scale *= 128) {
        const byte = body[at++] as number;
        value += (byte & 0x7f) * scale;
        if (byte < 0x80) return value;
      }
    };
    while (at < to) {
      const key = varint();
      const wire = key & 7;
      if (wire === 0) varint();
      else if (wire === 1) at += 8;
      else if (wire === 5) at += 4;
      else {
        const length = varint();
        if (key >>> 3 === wanted) each(at, at + length);
        at += length;
      }
    }
  };
  fields(0, body.length, 1, (rs, rsEnd) =>
    fields(rs, rsEnd, 2, (ss, ssEnd) =>
      fields(ss, ssEnd, 2, () => {
        count += 1;
      }),
    ),
  );
  return count;
}
