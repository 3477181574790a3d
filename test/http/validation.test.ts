// Bad input (DESIGN §3 Conventions): every kind gets its status and an RFC 9457 problem naming
// the field, never a 500, and writes nothing. After each test the database file itself is read
// to prove that nothing was stored.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { get } from "../../src/db/op.ts";
import { expectProblem, expectStatus, totals } from "../helpers/assertions.ts";
import { startServer, type TestResponse, type TestServer } from "../helpers/server.ts";

const MAX_BODY = 4096;
const MAX_DOCUMENT = 256;

let server: TestServer;
beforeAll(async () => {
  server = await startServer(
    {
      OUTBOXD_MAX_BODY_BYTES: String(MAX_BODY),
      OUTBOXD_MAX_RECORDS_PER_COMMIT: "3",
      OUTBOXD_MAX_EVENTS_PER_COMMIT: "3",
      OUTBOXD_MAX_DOCUMENT_BYTES: String(MAX_DOCUMENT),
    },
    { dispatch: false },
  );
});
afterAll(async () => {
  await server.stop();
});

/** Rows in every table a commit writes, read from the database beside the HTTP API. */
async function storedRows(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ["records", "events", "deliveries", "commits", "endpoints", "tokens"]) {
    const row = await server.outboxd.db.driver.read(get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`));
    counts[table] = Number(row?.n);
  }
  return counts;
}

afterEach(async () => {
  expect(await storedRows()).toEqual({
    records: 0,
    events: 0,
    deliveries: 0,
    commits: 0,
    endpoints: 0,
    tokens: 0,
  });
  expect(await totals(server)).toEqual({ events: 0, deliveries: 0 });
});

/** A request with a raw body (bytes or a stream) and no help from the harness. */
async function raw(
  method: string,
  path: string,
  body: BodyInit | null,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const response = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json", ...headers },
    body,
    // A ReadableStream body needs half-duplex streaming.
    ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

const commit = (body: unknown) => server.request("POST", "/v1/commits", body);
const record = (fields: Record<string, unknown> = {}) => ({
  collection: "c",
  id: "r",
  data: { a: 1 },
  ...fields,
});
const event = (fields: Record<string, unknown> = {}) => ({ type: "t.x", aggregate: "c/r", ...fields });

describe("malformed bodies", () => {
  test("malformed JSON is 400", async () => {
    for (const body of ["{", '{"records": [}', "records", "{'a': 1}", '{"a": 1} trailing', ""]) {
      const problem = expectProblem(await raw("POST", "/v1/commits", body), 400);
      expect(problem.type).toEndWith("malformed-json");
    }
  });

  test("a body that is not UTF-8 is 400", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"events": [{"type": "a'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}]}'),
    ]);
    const problem = expectProblem(await raw("POST", "/v1/commits", bytes), 400);
    expect(problem.detail).toContain("UTF-8");
  });

  test("JSON that is not an object is 422 at the root", async () => {
    for (const body of ["null", "[]", "42", '"text"', "true"])
      expectProblem(await raw("POST", "/v1/commits", body), 422, "");
  });

  test("JSON nested absurdly deep is 422, not a stack overflow", async () => {
    const depth = 1500; // 3 kB of brackets: within the body limit
    const body = `{"events": [{"type": "t.x", "aggregate": "a", "payload": ${"[".repeat(depth)}${"]".repeat(depth)}}]}`;
    expect(body.length).toBeLessThan(MAX_BODY);
    const problem = expectProblem(await raw("POST", "/v1/commits", body), 422);
    expect(problem.errors[0].pointer).toStartWith("/events/0/payload/0/0/0");
  });

  test("also at a depth that overflows JSON.stringify (200,000 levels in 400 kB, under the default limit)", async () => {
    const roomy = await startServer({}, { dispatch: false });
    try {
      const depth = 200_000;
      const body = `{"events": [{"type": "t.x", "aggregate": "a", "payload": ${"[".repeat(depth)}${"]".repeat(depth)}}]}`;
      for (const key of [undefined, "with-key"]) {
        const response = await roomy.request(
          "POST",
          "/v1/commits",
          body,
          key ? { "idempotency-key": key } : {},
        );
        expectProblem(response, 422);
      }
      expectStatus(await roomy.request("GET", "/v1/events"), 200);
      expect(await totals(roomy)).toEqual({ events: 0, deliveries: 0 });
    } finally {
      await roomy.stop();
    }
  });
});

describe("bodies over OUTBOXD_MAX_BODY_BYTES are 413", () => {
  const big = JSON.stringify({ events: [event({ payload: { pad: "x".repeat(MAX_BODY) } })] });

  test("with an honest Content-Length", async () => {
    const problem = expectProblem(await raw("POST", "/v1/commits", big), 413);
    expect(problem.type).toEndWith("body-too-large");
  });

  test("streamed without a Content-Length (chunked)", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(512));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"events": [], "pad": "'));
        if (sent >= 4 * MAX_BODY) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.byteLength;
      },
    });
    const problem = expectProblem(await raw("POST", "/v1/commits", stream), 413);
    expect(problem.type).toEndWith("body-too-large");
  });

  test("with a Content-Length that claims more than the limit, whatever follows", async () => {
    // A raw socket: the header claims a huge body, the client sends only a little of it.
    const response = await new Promise<string>((resolve, reject) => {
      const url = new URL(server.url);
      let received = "";
      Bun.connect({
        hostname: url.hostname,
        port: Number(url.port),
        socket: {
          open(socket) {
            socket.write(
              `POST /v1/commits HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${server.token}\r\n` +
                `Content-Type: application/json\r\nContent-Length: ${100 * MAX_BODY}\r\n\r\n{"events": [`,
            );
          },
          data(socket, data) {
            received += new TextDecoder().decode(data);
            if (received.includes("\r\n\r\n")) {
              socket.end();
              resolve(received);
            }
          },
          error(_socket, error) {
            reject(error);
          },
          close() {
            resolve(received);
          },
        },
      }).catch(reject);
    });
    expect(response).toStartWith("HTTP/1.1 413");
  });

  test("a body just within the limit is read (and judged on its content)", async () => {
    const body = JSON.stringify({ records: [], pad: "x".repeat(MAX_BODY - 40) });
    expect(body.length).toBeLessThanOrEqual(MAX_BODY);
    expectProblem(await raw("POST", "/v1/commits", body), 422, "/pad");
  });
});

describe("schema violations are 422 naming the field", () => {
  const cases: [string, unknown, string][] = [
    ["records not an array", { records: "r" }, "/records"],
    ["events not an array", { events: { type: "t" } }, "/events"],
    ["collection not a string", { records: [record({ collection: 5 })] }, "/records/0/collection"],
    ["id missing", { records: [{ collection: "c", data: {} }] }, "/records/0/id"],
    [
      "expectedVersion a string",
      { records: [record({ expectedVersion: "3" })] },
      "/records/0/expectedVersion",
    ],
    [
      "expectedVersion negative",
      { records: [record({ expectedVersion: -1 })] },
      "/records/0/expectedVersion",
    ],
    [
      "expectedVersion fractional",
      { records: [record({ expectedVersion: 1.5 })] },
      "/records/0/expectedVersion",
    ],
    ["data an array", { records: [record({ data: [1] })] }, "/records/0/data"],
    ["data a string", { records: [record({ data: "{}" })] }, "/records/0/data"],
    ["delete not a boolean", { records: [record({ data: null, delete: "yes" })] }, "/records/0/delete"],
    ["delete with data", { records: [record({ delete: true })] }, "/records/0/data"],
    ["neither data nor delete", { records: [{ collection: "c", id: "r" }] }, "/records/0/data"],
    ["a record twice", { records: [record(), record()] }, "/records/1"],
    ["type missing", { events: [{ aggregate: "a" }] }, "/events/0/type"],
    ["type not a string", { events: [event({ type: 5 })] }, "/events/0/type"],
    ["type with bad characters", { events: [event({ type: "a b" })] }, "/events/0/type"],
    ["type empty", { events: [event({ type: "" })] }, "/events/0/type"],
    ["type with an empty segment", { events: [event({ type: "a..b" })] }, "/events/0/type"],
    ["aggregate empty", { events: [event({ aggregate: "" })] }, "/events/0/aggregate"],
    ["aggregate with a control character", { events: [event({ aggregate: "a\nb" })] }, "/events/0/aggregate"],
    ["aggregate too long", { events: [event({ aggregate: "a".repeat(256) })] }, "/events/0/aggregate"],
    [
      "deliverWithin not a duration",
      { events: [event({ deliverWithin: "10 minutes" })] },
      "/events/0/deliverWithin",
    ],
    ["deliverBy not a timestamp", { events: [event({ deliverBy: "tomorrow" })] }, "/events/0/deliverBy"],
    [
      "deliverBy an impossible date",
      { events: [event({ deliverBy: "2099-02-30T10:00:00Z" })] },
      "/events/0/deliverBy",
    ],
    [
      "deliverAfter without a zone",
      { events: [event({ deliverAfter: "2099-01-01T10:00:00" })] },
      "/events/0/deliverAfter",
    ],
    [
      "deliverAfter an impossible date",
      { events: [event({ deliverAfter: "2099-04-31T00:00:00Z" })] },
      "/events/0/deliverAfter",
    ],
    ["endpoints not an array", { events: [event({ endpoints: "ep_1" })] }, "/events/0/endpoints"],
    ["endpoints of numbers", { events: [event({ endpoints: [1] })] }, "/events/0/endpoints/0"],
    ["an endpoint listed twice", { events: [event({ endpoints: ["ep_1", "ep_1"] })] }, "/events/0/endpoints"],
    ["event id a number", { events: [event({ id: 7 })] }, "/events/0/id"],
    ["event id not a UUID", { events: [event({ id: "abc" })] }, "/events/0/id"],
    [
      "an event id twice",
      {
        events: [
          event({ id: "8c3b1a0e-2a5d-4c59-9a57-0f4e3f6f1a11" }),
          event({ id: "8C3B1A0E-2A5D-4C59-9A57-0F4E3F6F1A11" }),
        ],
      },
      "/events/1/id",
    ],
  ];
  test.each(cases)("%s", async (_name, body, pointer) => {
    expectProblem(await commit(body), 422, pointer);
  });

  test("all violations are reported at once", async () => {
    const body = expectProblem(
      await commit({
        records: [record({ collection: "" })],
        events: [event({ type: 1, deliverWithin: "x" })],
      }),
      422,
    );
    const pointers = body.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(["/events/0/deliverWithin", "/events/0/type", "/records/0/collection"]);
  });
});

describe("unknown fields are 422 with a pointer to the unknown key", () => {
  test.each([
    ["at the top", { records: [record()], extra: 1 }, "/extra"],
    ["in a record", { records: [record({ version: 2 })] }, "/records/0/version"],
    ["in an event", { events: [event({ deliverAt: "soon" })] }, "/events/0/deliverAt"],
    ["with a key needing escapes", { records: [record()], "a/b~c": 1 }, "/a~1b~0c"],
  ])("%s", async (_name, body, pointer) => {
    const problem = expectProblem(await commit(body), 422, pointer);
    expect(problem.errors.find((e: { pointer: string }) => e.pointer === pointer).detail).toBe(
      "unknown field",
    );
  });
});

describe("names: collection and id are 1-128 of [A-Za-z0-9._:-], not . or ..", () => {
  test.each([
    ["empty collection", { collection: "" }, "/records/0/collection"],
    ["empty id", { id: "" }, "/records/0/id"],
    ["a space", { id: "r 1" }, "/records/0/id"],
    ["a slash", { collection: "a/b" }, "/records/0/collection"],
    ["non-ASCII", { id: "récord" }, "/records/0/id"],
    ["a NUL", { id: "r\u0000" }, "/records/0/id"],
    ["129 characters", { id: "x".repeat(129) }, "/records/0/id"],
    ["a collection of .", { collection: "." }, "/records/0/collection"],
    ["a collection of ..", { collection: ".." }, "/records/0/collection"],
    ["an id of .", { id: "." }, "/records/0/id"],
    ["an id of ..", { id: ".." }, "/records/0/id"],
  ])("%s", async (_name, fields, pointer) => {
    expectProblem(await commit({ records: [record(fields)] }), 422, pointer);
  });

  test("three dots, or dots among other characters, are names", async () => {
    expectProblem(await server.request("GET", "/v1/records/.../.a."), 404);
  });
});

describe("limits", () => {
  test("more records than OUTBOXD_MAX_RECORDS_PER_COMMIT is 422", async () => {
    const records = ["a", "b", "c", "d"].map((id) => record({ id }));
    expectProblem(await commit({ records }), 422, "/records");
  });

  test("more events than OUTBOXD_MAX_EVENTS_PER_COMMIT is 422", async () => {
    expectProblem(await commit({ events: [event(), event(), event(), event()] }), 422, "/events");
  });

  test("data over OUTBOXD_MAX_DOCUMENT_BYTES is 422", async () => {
    expectProblem(
      await commit({ records: [record({ data: { pad: "x".repeat(MAX_DOCUMENT) } })] }),
      422,
      "/records/0/data",
    );
  });

  test("a payload over OUTBOXD_MAX_DOCUMENT_BYTES is 422 (counted in UTF-8 bytes)", async () => {
    expectProblem(
      await commit({ events: [event({ payload: { pad: "x".repeat(MAX_DOCUMENT) } })] }),
      422,
      "/events/0/payload",
    );
    // 100 three-byte characters: 300 bytes, though only 100 UTF-16 units.
    expectProblem(await commit({ events: [event({ payload: "€".repeat(100) })] }), 422, "/events/0/payload");
  });

  test("an empty commit is 422", async () => {
    for (const body of [{}, { records: [], events: [] }, { records: null, events: null }]) {
      expectProblem(await commit(body), 422, "");
    }
  });
});

describe("queries", () => {
  test.each([
    "/v1/events?limit=501",
    "/v1/events?limit=0",
    "/v1/events?limit=-1",
    "/v1/events?limit=abc",
    "/v1/deliveries?limit=501",
    "/v1/records/c?limit=501",
    "/v1/tokens?limit=501",
    "/v1/endpoints?limit=501",
  ])("%s is 422 at /limit", async (path) => {
    expectProblem(await server.request("GET", path), 422, "/limit");
  });

  test("an unknown query parameter is 422", async () => {
    expectProblem(await server.request("GET", "/v1/events?colour=red"), 422, "/colour");
  });

  test("a cursor this list never returned is 422", async () => {
    expectProblem(await server.request("GET", "/v1/events?after=abc"), 422, "query:after");
  });

  test("limit=500 is fine", async () => {
    expectStatus(await server.request("GET", "/v1/events?limit=500"), 200);
  });

  test("bad delivery status filter is 422", async () => {
    expectProblem(await server.request("GET", "/v1/deliveries?status=lost"), 422, "/status");
  });
});

describe("default limits (DESIGN §3): 100 records, 100 events, 64 KiB documents, 1 MiB bodies", () => {
  let roomy: TestServer;
  beforeAll(async () => {
    roomy = await startServer({}, { dispatch: false });
  });
  afterAll(async () => {
    expect(await totals(roomy)).toEqual({ events: 0, deliveries: 0 });
    await roomy.stop();
  });
  const records = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ collection: "d", id: `r${i}`, data: {} }));
  const events = (n: number) => Array.from({ length: n }, () => ({ type: "d.x", aggregate: "d/1" }));

  test("101 records or 101 events are 422", async () => {
    expectProblem(await roomy.request("POST", "/v1/commits", { records: records(101) }), 422, "/records");
    expectProblem(await roomy.request("POST", "/v1/commits", { events: events(101) }), 422, "/events");
  });

  test("data or payload over 64 KiB is 422", async () => {
    const pad = "x".repeat(64 * 1024);
    expectProblem(
      await roomy.request("POST", "/v1/commits", {
        records: [{ collection: "d", id: "big", data: { pad } }],
      }),
      422,
      "/records/0/data",
    );
    expectProblem(
      await roomy.request("POST", "/v1/commits", {
        events: [{ type: "d.x", aggregate: "d/1", payload: pad }],
      }),
      422,
      "/events/0/payload",
    );
  });

  test("a body over 1 MiB is 413", async () => {
    const body = JSON.stringify({
      events: [{ type: "d.x", aggregate: "d/1", payload: "x".repeat(1024 * 1024) }],
    });
    expectProblem(await roomy.request("POST", "/v1/commits", body), 413);
  });
});

describe("replay deadlines", () => {
  test("a deliverWithin that is zero or too large to count is 422, and the delivery stays dead", async () => {
    let now = Date.parse("2026-11-29T10:00:00.000Z");
    const clocked = await startServer({ OUTBOXD_DISPATCH_CRON: "0 0 1 1 *" }, { clock: () => now });
    try {
      const endpoint = expectStatus(
        await clocked.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/replay" }),
        201,
      ).id;
      const committed = expectStatus(
        await clocked.request("POST", "/v1/commits", {
          events: [{ type: "r.x", aggregate: "replay/1", deliverWithin: "1m", endpoints: [endpoint] }],
        }),
        201,
      );
      const delivery = committed.events[0].deliveries[0].id;
      now += 2 * 60_000;
      await clocked.outboxd.dispatcher?.sweep();
      expect(expectStatus(await clocked.request("GET", `/v1/deliveries/${delivery}`), 200).status).toBe(
        "dead",
      );
      for (const deliverWithin of ["0s", "0ms", "99999999999999999999d"]) {
        expectProblem(
          await clocked.request("POST", `/v1/deliveries/${delivery}/replay`, { deliverWithin }),
          422,
          "/deliverWithin",
        );
        expectProblem(
          await clocked.request("POST", "/v1/deliveries/replay", { status: "dead", deliverWithin }),
          422,
          "/deliverWithin",
        );
      }
      expect(expectStatus(await clocked.request("GET", `/v1/deliveries/${delivery}`), 200).status).toBe(
        "dead",
      );
      const replayed = expectStatus(
        await clocked.request("POST", `/v1/deliveries/${delivery}/replay`, { deliverWithin: "1h" }),
        200,
      );
      expect(replayed.status).toBe("pending");
    } finally {
      await clocked.stop();
    }
  });
});

describe("headers", () => {
  test.each([
    ["empty", ""],
    ["non-ASCII", "k\u00e9"],
    ["a tab", "k\tk"],
  ])("an Idempotency-Key that is not 1-255 printable ASCII (%s) is 422", async (_name, key) => {
    for (const path of ["/v1/commits", "/v1/proposals"]) {
      const body =
        path === "/v1/commits"
          ? { records: [record()] }
          : { summary: "s", commit: { events: [{ type: "t.x", aggregate: "c/r" }] } };
      expectProblem(
        await server.request("POST", path, body, { "idempotency-key": key }),
        422,
        "header:Idempotency-Key",
      );
    }
  });

  test("an Idempotency-Key over 255 characters is 422", async () => {
    expectProblem(
      await server.request(
        "POST",
        "/v1/commits",
        { records: [record()] },
        { "idempotency-key": "k".repeat(256) },
      ),
      422,
      "header:Idempotency-Key",
    );
  });
});

test("no route is a 404 problem", async () => {
  expectProblem(await server.request("GET", "/v1/nothing-here"), 404);
  expectProblem(await server.request("DELETE", "/v1/commits"), 404);
});
