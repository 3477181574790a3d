// OpenTelemetry tracing (DESIGN §14) against a real OTLP/HTTP receiver on 127.0.0.1: what the
// exporter sends is decoded, and the spans must form one trace from the caller's traceparent
// through the server span and outboxd.commit to one outboxd.deliver per webhook attempt, whose
// context is the webhook's traceparent header.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { NACKED } from "../../src/deliveries/ack.ts";
import { LEASE_EXPIRED } from "../../src/deliveries/lease-expiry.ts";
import { createLogger } from "../../src/ops/log.ts";
import { NO_TRACING, startTracing, validTraceparent } from "../../src/ops/tracing.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { runProbe } from "../helpers/probe.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

describe("tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)", () => {
  let otlp: OtlpReceiver;
  let hooks: TestReceiver;
  let server: TestServer;
  let endpointId: string;

  beforeAll(async () => {
    otlp = startOtlpReceiver();
    // The first attempt of every event fails with 500, the second succeeds.
    const seen = new Set<string>();
    hooks = startReceiver((request) => {
      const id = request.headers.get("webhook-id") ?? "";
      if (seen.has(id)) return new Response('{"result":"applied"}', { status: 200 });
      seen.add(id);
      return new Response("try again", { status: 500 });
    });
    // The batch processor reads its delay from the process environment when it is built
    // (default 5 s); a short one keeps the test quick. Restored at once: other tests share it.
    process.env.OTEL_BSP_SCHEDULE_DELAY = "100";
    try {
      server = await startServer({
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_SERVICE_NAME: "outboxd-under-test",
        OUTBOXD_RETRY_BASE: "20ms",
        OUTBOXD_RETRY_CAP: "100ms",
      });
    } finally {
      delete process.env.OTEL_BSP_SCHEDULE_DELAY;
    }
    const created = expectStatus(await server.request("POST", "/v1/endpoints", { url: hooks.url }), 201);
    endpointId = created.id;
  });
  afterAll(async () => {
    await server.stop();
    await hooks.stop();
    await otlp.stop();
  });

  /** Commits one event, waits for both attempts, and returns the event id and sequence. */
  async function commitAndDeliver(headers: Record<string, string>) {
    const committed = expectStatus(
      await server.request(
        "POST",
        "/v1/commits",
        {
          records: [{ collection: "returns", id: `r-${crypto.randomUUID()}`, data: { status: "approved" } }],
          events: [{ type: "return.approved", payload: { ok: true } }],
        },
        headers,
      ),
      201,
    );
    const event = committed.events[0] as { id: string; sequence: number; aggregate: string };
    const webhooks = await waitFor("two attempts, the second answered 200", () => {
      const got = hooks.received.filter((r) => r.headers.get("webhook-id") === event.id);
      return got.length >= 2 && got;
    });
    return { event, commitId: committed.commitId as string, webhooks };
  }

  /** Waits for the spans of one trace: the exporter sends in batches, on its own schedule. */
  function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
    return waitFor(
      `${count} spans of trace ${traceId}`,
      () => {
        const spans = otlp.spans.filter((s) => s.traceId === traceId);
        return spans.length >= count && spans;
      },
      30_000,
    );
  }

  test("a commit with a traceparent: server span, outboxd.commit and one outboxd.deliver per attempt in that trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const { event, commitId, webhooks } = await commitAndDeliver({
      traceparent: `00-${traceId}-${callerSpan}-01`,
    });
    const spans = await spansOf(traceId, 4);
    // OTLP's default encoding, decoded strictly by the receiver.
    expect(otlp.contentTypes.every((t) => t === "application/x-protobuf")).toBe(true);
    expect(otlp.malformed).toEqual([]);
    expect(spans[0]?.resource["service.name"]).toBe("outboxd-under-test");
    expect(spans[0]?.scope.name).toBe("outboxd");

    const serverSpan = spans.find((s) => s.kind === SERVER && s.attributes["http.route"] === "/v1/commits");
    expect(serverSpan).toMatchObject({
      name: "POST /v1/commits",
      parentSpanId: callerSpan,
      flags: 0x301, // sampled, and the parent (the caller's span) is remote
      attributes: {
        "http.request.method": "POST",
        "http.response.status_code": 201,
        "url.path": "/v1/commits",
      },
    });
    const commitSpan = spans.find((s) => s.name === "outboxd.commit");
    expect(commitSpan).toMatchObject({
      parentSpanId: serverSpan?.spanId,
      kind: 1,
      flags: 0x101, // sampled; its parent is the server span in this process (not remote)
      attributes: { "outboxd.commit_id": commitId, "outboxd.events": 1, "outboxd.replayed": false },
    });

    const delivers = spans
      .filter((s) => s.name === "outboxd.deliver")
      .sort((a, b) => Number(a.attributes["outboxd.attempt"]) - Number(b.attributes["outboxd.attempt"]));
    expect(delivers).toHaveLength(2);
    const expected = {
      "outboxd.event_id": event.id,
      "outboxd.endpoint_id": endpointId,
      "outboxd.aggregate": event.aggregate,
      "outboxd.sequence": event.sequence,
    };
    expect(delivers[0]).toMatchObject({
      kind: CLIENT,
      parentSpanId: commitSpan?.spanId,
      status: ERROR,
      attributes: { ...expected, "outboxd.attempt": 1, "http.response.status_code": 500 },
    });
    expect(delivers[1]).toMatchObject({
      kind: CLIENT,
      parentSpanId: commitSpan?.spanId,
      attributes: { ...expected, "outboxd.attempt": 2, "http.response.status_code": 200 },
    });
    expect(delivers[1]?.status).not.toBe(ERROR);

    // Each webhook's traceparent names the deliver span of its own attempt.
    for (const webhook of webhooks) {
      const attempt = Number(webhook.headers.get("outbox-attempt"));
      const span = delivers[attempt - 1];
      expect(webhook.headers.get("traceparent")).toBe(`00-${traceId}-${span?.spanId}-01`);
    }
  });

  test("a commit that fails: its outboxd.commit span has status ERROR, the problem's message and status", async () => {
    const traceId = "7bf92f3577b34da6a3ce929d0e0e4731";
    const conflict = expectStatus(
      await server.request(
        "POST",
        "/v1/commits",
        {
          records: [{ collection: "returns", id: `r-${crypto.randomUUID()}`, expectedVersion: 5, data: {} }],
        },
        { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      ),
      409,
    );
    const spans = await spansOf(traceId, 2);
    const serverSpan = spans.find((s) => s.kind === SERVER);
    // 4xx is the caller's doing: the server span is not failed (semantic conventions).
    expect(serverSpan).toMatchObject({ status: 0, attributes: { "http.response.status_code": 409 } });
    expect(spans.find((s) => s.name === "outboxd.commit")).toMatchObject({
      parentSpanId: serverSpan?.spanId,
      status: ERROR,
      statusMessage: conflict.detail,
      attributes: { "outboxd.problem_status": 409 },
    });
  });

  test("a malformed traceparent is ignored: a new trace starts and the webhook carries it", async () => {
    const { event, webhooks } = await commitAndDeliver({
      traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01`,
    });
    const header = webhooks[0]?.headers.get("traceparent") ?? "";
    const traceId = header.split("-")[1] ?? "";
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe("0".repeat(32));
    const spans = await spansOf(traceId, 4);
    const serverSpan = spans.find((s) => s.kind === SERVER);
    expect(serverSpan?.parentSpanId).toBe("");
    const commitSpan = spans.find((s) => s.name === "outboxd.commit");
    expect(commitSpan?.parentSpanId).toBe(serverSpan?.spanId);
    const delivers = spans.filter((s) => s.name === "outboxd.deliver");
    expect(delivers.map((s) => s.attributes["outboxd.event_id"])).toEqual([event.id, event.id]);
  });

  test("a caller's unsampled traceparent: nothing is recorded, the context passed on keeps the trace with flags 00", async () => {
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4737";
    const tracing = await startTracing(
      { tracesUrl: `${otlp.url}/v1/traces`, serviceName: "unsampled", protocol: "http/protobuf" },
      () => {},
    );
    const commit = tracing.commitBegun(`00-${traceId}-00f067aa0ba902b7-00`);
    tracing.commitEnded(commit, summary("unsampled"));
    const passedOn = commit.traceparent;
    expect(passedOn).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(passedOn).not.toContain("00f067aa0ba902b7");
    const deliver = tracing.deliverBegun(passedOn);
    tracing.deliverEnded(deliver, attempt, 1, { statusCode: 200, error: null });
    expect(deliver.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect(deliver.traceparent).not.toBe(passedOn);
    await tracing.shutdown(); // flushes whatever was queued
    expect(otlp.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });

  test.each([
    ["http/protobuf", "6bf92f3577b34da6a3ce929d0e0e4738", "application/x-protobuf"],
    ["http/json", "6bf92f3577b34da6a3ce929d0e0e4739", "application/json"],
  ] as const)(
    "what the exporter sends (%s) is OTLP for any text: escapes, non-ASCII, a large message, several batches",
    async (protocol, traceId, contentType) => {
      const requestsBefore = otlp.contentTypes.length;
      const parent = `00-${traceId}-00f067aa0ba902b7-01`;
      // The batch processor reads its variables when it is built.
      const tracing = await withEnv(
        { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "7", OTEL_BSP_SCHEDULE_DELAY: "50" },
        () => startTracing({ tracesUrl: `${otlp.url}/v1/traces`, serviceName: "texts", protocol }, () => {}),
      );
      const odd = 'quote " backslash \\ newline \n tab \t nul \u0000 é 漢字 😀 \u2028';
      const huge = "x".repeat(700_000);
      for (let i = 0; i < 20; i++) {
        const span = tracing.commitBegun(parent);
        tracing.commitEnded(span, summary(`c${i} ${odd}`));
      }
      const failedSend = tracing.deliverBegun(parent);
      tracing.deliverEnded(failedSend, { ...attempt, aggregate: odd }, 1, { statusCode: null, error: huge });
      tracing.commitEnded(tracing.commitBegun(parent), summary("after"));
      await tracing.shutdown();
      expect(otlp.malformed).toEqual([]);
      const requests = otlp.contentTypes.slice(requestsBefore);
      expect(requests.length).toBeGreaterThanOrEqual(4); // 22 spans in batches of at most 7
      expect(requests.every((t) => t === contentType)).toBe(true);
      const spans = otlp.spans.filter((s) => s.traceId === traceId);
      expect(spans).toHaveLength(22);
      expect(spans[0]?.resource["service.name"]).toBe("texts");
      expect(spans[0]?.scope.name).toBe("outboxd");
      const commits = spans.filter((s) => s.name === "outboxd.commit");
      expect(commits.map((s) => s.attributes["outboxd.commit_id"]).sort()).toEqual(
        [...Array.from({ length: 20 }, (_, i) => `c${i} ${odd}`), "after"].sort(),
      );
      expect(commits.find((s) => s.attributes["outboxd.commit_id"] === `c0 ${odd}`)?.attributes).toEqual({
        "outboxd.commit_id": `c0 ${odd}`,
        "outboxd.events": 1,
        "outboxd.deliveries": 2,
        "outboxd.replayed": false,
      });
      const deliver = spans.find((s) => s.name === "outboxd.deliver");
      expect(deliver?.attributes).toMatchObject({ "outboxd.aggregate": odd, "error.type": "send_failed" });
      expect(deliver?.statusMessage).toBe(huge);
      for (const span of spans) {
        expect(span.startTimeUnixNano).toMatch(/^\d{19}$/);
        expect(BigInt(span.endTimeUnixNano) >= BigInt(span.startTimeUnixNano)).toBe(true);
        expect(Math.abs(Number(BigInt(span.endTimeUnixNano) / 1_000_000n) - Date.now())).toBeLessThan(60_000);
      }
    },
  );

  test("without a traceparent the server span is a root and the delivery still joins its trace", async () => {
    const { webhooks } = await commitAndDeliver({});
    const traceId = (webhooks[0]?.headers.get("traceparent") ?? "").split("-")[1] ?? "";
    const spans = await spansOf(traceId, 4);
    expect(spans.find((s) => s.kind === SERVER)?.parentSpanId).toBe("");
    expect(spans.filter((s) => s.name === "outboxd.deliver")).toHaveLength(2);
  });

  test("a pull endpoint's lapsed lease, nack and ack are attempts: one outboxd.deliver each, in the commit's trace", async () => {
    const pullId = expectStatus(await server.request("POST", "/v1/endpoints", { kind: "pull" }), 201).id;
    const traceId = "5cf92f3577b34da6a3ce929d0e0e4737";
    const { event } = await commitAndDeliver({ traceparent: `00-${traceId}-00f067aa0ba902b8-01` });
    const poll = async (lease = "30s") => {
      const answer = expectStatus(
        await server.request("POST", `/v1/endpoints/${pullId}/poll`, { wait: "10s", lease }),
        200,
      );
      expect(answer.data.map((d: { event: { id: string } }) => d.event.id)).toEqual([event.id]);
      const { deliveryId, leaseToken } = answer.data[0];
      return { deliveryId, leaseToken };
    };
    const ack = async (body: unknown, expected: Record<string, number>) =>
      expect(
        expectStatus(await server.request("POST", `/v1/endpoints/${pullId}/ack`, body), 200),
      ).toMatchObject(expected);
    await poll("1s"); // not answered: the sweep records its lapse as attempt 1
    await ack({ nacks: [await poll()] }, { nacked: 1 });
    await ack({ acks: [await poll()] }, { acked: 1 });

    const pulled = (spans: ReceivedSpan[]) =>
      spans.filter((s) => s.name === "outboxd.deliver" && s.attributes["outboxd.endpoint_id"] === pullId);
    const spans = await waitFor(
      "the lapse's, the nack's and the ack's outboxd.deliver spans",
      () => {
        const got = otlp.spans.filter((s) => s.traceId === traceId);
        return pulled(got).length >= 3 && got;
      },
      30_000,
    );
    const commitSpan = spans.find((s) => s.name === "outboxd.commit");
    const [lapsed, nacked, acked] = pulled(spans).sort(
      (a, b) => Number(a.attributes["outboxd.attempt"]) - Number(b.attributes["outboxd.attempt"]),
    );
    const expected = {
      "outboxd.event_id": event.id,
      "outboxd.endpoint_id": pullId,
      "outboxd.aggregate": event.aggregate,
      "outboxd.sequence": event.sequence,
    };
    expect(lapsed).toMatchObject({
      parentSpanId: commitSpan?.spanId,
      status: ERROR,
      statusMessage: LEASE_EXPIRED,
      attributes: { ...expected, "outboxd.attempt": 1, "error.type": "lease_expired" },
    });
    expect(nacked).toMatchObject({
      parentSpanId: commitSpan?.spanId,
      status: ERROR,
      statusMessage: NACKED,
      attributes: { ...expected, "outboxd.attempt": 2, "error.type": "nacked" },
    });
    expect(acked).toMatchObject({
      parentSpanId: commitSpan?.spanId,
      attributes: { ...expected, "outboxd.attempt": 3 },
    });
    expect(acked?.status).not.toBe(ERROR);
    // No HTTP answer is part of a pull attempt: no status code, and an ack is no error.
    for (const span of [lapsed, nacked, acked])
      expect(span?.attributes["http.response.status_code"]).toBeUndefined();
    expect(acked?.attributes["error.type"]).toBeUndefined();
  });
});

const attempt = { eventId: "e", endpointId: "ep_1", aggregate: "a", sequence: 1, attempt: 1 };
/** A commit's answer as the commit span reads it. */
const summary = (commitId: string) => ({
  result: { commitId, events: [{}] },
  deliveries: 2,
  replayed: false,
});

describe("tracing off and its settings", () => {
  const base = { OUTBOXD_DATABASE_URL: "file:/tmp/outboxd-tracing-config.db" };

  test("off by default: no settings, no span can begin, and the caller's context is passed on", async () => {
    expect(loadConfig(base).tracing).toBeNull();
    expect(await startTracing(null, () => {})).toBe(NO_TRACING);
    expect(NO_TRACING.enabled).toBe(false);
    const header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const request = new Request("http://outboxd/", { headers: { traceparent: header } });
    expect(NO_TRACING.serverBegun(request)).toBeNull();
    expect(NO_TRACING.requestTraceparent(request)).toBe(header);
    expect(() => NO_TRACING.commitBegun(header)).toThrow("tracing is off");
    expect(() => NO_TRACING.deliverBegun(header)).toThrow("tracing is off");
  });

  test("off, a whole outboxd serving a commit loads no OpenTelemetry module at all", async () => {
    expect(await runProbe(join(import.meta.dir, "tracing-off-probe.ts"))).toEqual({ status: 201, loaded: 0 });
  });

  test("the standard variables: endpoint, traces endpoint, service name, protocol, disabled, none", () => {
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: "outboxd",
    });
    expect(
      loadConfig({
        ...base,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://tempo.example/otlp/v1/traces",
        OTEL_SERVICE_NAME: "orders-outbox",
      }).tracing,
    ).toEqual({
      tracesUrl: "https://tempo.example/otlp/v1/traces",
      serviceName: "orders-outbox",
      protocol: "http/protobuf",
    });
    const on = { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(loadConfig({ ...on, OTEL_SDK_DISABLED: "true" }).tracing).toBeNull();
    expect(loadConfig({ ...on, OTEL_TRACES_EXPORTER: "none" }).tracing).toBeNull();
    const protocol = (env: Record<string, string>) => loadConfig({ ...on, ...env }).tracing?.protocol;
    expect(protocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toBe("http/json");
    expect(protocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" })).toBe("http/protobuf");
    // The traces-specific variable wins over the general one.
    expect(
      protocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" }),
    ).toBe("http/json");
  });

  test("what outboxd cannot do is refused at start with the variable named", () => {
    const on = { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems.join("\n");
      }
      throw new Error("accepted");
    };
    expect(refused({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toContain(
      "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
    );
    expect(refused({ ...on, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" })).toContain(
      "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc",
    );
    expect(refused({ ...on, OTEL_TRACES_EXPORTER: "zipkin" })).toContain("OTEL_TRACES_EXPORTER=zipkin");
    expect(refused({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toContain(
      "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318",
    );
  });

  test("one start-up line says tracing is on and where it exports (no credentials); none when off", async () => {
    const lines: string[] = [];
    const logger = createLogger("info", (line) => lines.push(line));
    const on = await startServer(
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://user:secret@127.0.0.1:9/v1/traces?token=t" },
      { logger },
    );
    await on.stop();
    const said = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === "tracing on");
    expect(said).toEqual([
      expect.objectContaining({
        level: "info",
        exportsTo: "http://127.0.0.1:9/v1/traces",
        protocol: "http/protobuf",
        serviceName: "outboxd",
        sampler: expect.any(String),
      }),
    ]);
    expect(lines.join("")).not.toContain("secret");
    lines.length = 0;
    const off = await startServer({}, { logger });
    await off.stop();
    expect(lines.filter((line) => line.includes("tracing"))).toEqual([]);
  });

  test("the sampler OTEL_TRACES_SAMPLER names, parent-based by default", async () => {
    const settings = {
      tracesUrl: "http://127.0.0.1:9/v1/traces",
      serviceName: "s",
      protocol: "http/protobuf",
    } as const;
    const parent = (sampled: boolean) =>
      `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0${sampled ? 1 : 0}`;
    /** Whether a root span, a child of a sampled parent and a child of an unsampled one are sampled. */
    const decisions = async (env: Record<string, string>) => {
      const tracing = await withEnv(env, () => startTracing(settings, () => {}));
      const sampled = (from: string | undefined) => tracing.commitBegun(from).traceparent.endsWith("-01");
      const result = [sampled(undefined), sampled(parent(true)), sampled(parent(false))];
      await tracing.shutdown();
      return result;
    };
    expect(await decisions({})).toEqual([true, true, false]);
    expect(await decisions({ OTEL_TRACES_SAMPLER: "always_off" })).toEqual([false, false, false]);
    expect(await decisions({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })).toEqual([false, true, false]);
    expect(
      await decisions({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" }),
    ).toEqual([false, true, false]);
    expect(await decisions({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1" })).toEqual([
      true,
      true,
      true,
    ]);
  });

  test("the exporter's variables: headers and compression reach the collector; a 503 is retried", async () => {
    const seen: {
      status: number;
      encoding: string | null;
      authorization: string | null;
      team: string | null;
    }[] = [];
    const names: string[] = [];
    const collector = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const status = seen.length === 0 ? 503 : 200;
        seen.push({
          status,
          encoding: request.headers.get("content-encoding"),
          authorization: request.headers.get("authorization"),
          team: request.headers.get("x-team"),
        });
        const bytes = new Uint8Array(await request.arrayBuffer());
        const body = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(bytes))) as {
          resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[];
        };
        if (status === 200)
          for (const span of body.resourceSpans[0]?.scopeSpans[0]?.spans ?? []) names.push(span.name);
        return status === 503
          ? new Response("busy", { status, headers: { "retry-after": "0" } })
          : Response.json({ partialSuccess: {} });
      },
    });
    const warnings: string[] = [];
    try {
      const tracing = await withEnv(
        {
          OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-team=core",
          OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=traces",
          OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: "gzip",
        },
        () =>
          startTracing(
            {
              tracesUrl: `http://127.0.0.1:${collector.port}/v1/traces`,
              serviceName: "s",
              protocol: "http/json",
            },
            (message) => warnings.push(message),
          ),
      );
      tracing.commitEnded(tracing.commitBegun(undefined), summary("one"));
      await tracing.shutdown();
    } finally {
      collector.stop(true);
    }
    expect(seen).toEqual([
      { status: 503, encoding: "gzip", authorization: "Bearer abc", team: "traces" },
      { status: 200, encoding: "gzip", authorization: "Bearer abc", team: "traces" },
    ]);
    expect(names).toEqual(["outboxd.commit"]);
    expect(warnings).toEqual([]); // a retried 503 that then succeeded is no problem
  });

  test("a collector that cannot be reached: the spans are lost with a warning, and shutdown still resolves", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    const warnings: string[] = [];
    const tracing = await withEnv({ OTEL_EXPORTER_OTLP_TIMEOUT: "2000" }, () =>
      startTracing(
        { tracesUrl: `http://127.0.0.1:${port}/v1/traces`, serviceName: "s", protocol: "http/protobuf" },
        (message, fields) => warnings.push(`${message} ${JSON.stringify(fields)}`),
      ),
    );
    tracing.commitEnded(tracing.commitBegun(undefined), summary("lost"));
    await tracing.shutdown();
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((w) => w.startsWith("tracing: "))).toBe(true);
    // The error's own words, not the SDK's JSON of it (with its stack).
    expect(warnings.join("\n")).toContain(`connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(warnings.join("\n")).not.toContain("stack");
  });

  test("the W3C traceparent rule", () => {
    const ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(validTraceparent(ok)).toBe(ok);
    expect(validTraceparent(` ${ok}\t`)).toBe(ok);
    for (const bad of [
      "",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
      `ff-${ok.slice(3)}`,
      `00-${"0".repeat(32)}-00f067aa0ba902b7-01`,
      `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`,
      ok.toUpperCase(),
      `${ok}0`,
      ok.replace("-01", "-0g"),
    ]) {
      expect(validTraceparent(bad)).toBeUndefined();
    }
  });
});

/** Runs `start` with these variables in the process environment (the SDK reads them when it is built), then restores it. */
async function withEnv<T>(env: Record<string, string>, start: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return await start();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
