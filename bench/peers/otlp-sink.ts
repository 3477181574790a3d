// An OTLP/HTTP trace sink for the tracing bench: accepts what outboxd's exporter POSTs to
// /v1/traces (OTLP JSON), counts the spans and answers 200, as a collector would.
//
//   PORT=0 npx bun bench/peers/otlp-sink.ts       prints {"listening": "http://127.0.0.1:N"}
// HTTP: GET /count → {"spans", "exports"}; POST /v1/traces → {"partialSuccess": {}}.
const PORT = Number(process.env.PORT ?? 0);
let spans = 0;
let batches = 0;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: PORT,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (request.method === "GET" && path === "/count") return Response.json({ spans, exports: batches });
    if (request.method !== "POST" || path !== "/v1/traces") return new Response("not found", { status: 404 });
    // Counting "spanId" keys is enough here and far cheaper than parsing (the sink shares the CPU).
    const body = await request.text();
    for (let at = body.indexOf('"spanId"'); at !== -1; at = body.indexOf('"spanId"', at + 8)) spans += 1;
    batches += 1;
    return Response.json({ partialSuccess: {} });
  },
});
console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }));
