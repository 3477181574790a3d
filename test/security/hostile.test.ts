// Hostile input, property-based (fast-check): random and malformed requests at every route —
// wrong types, huge numbers, deep nesting, unicode edge cases (lone surrogates, NUL, RTL,
// emoji), duplicate keys, SQL-looking strings, path traversal in ids, invalid UTF-8, header
// injection — with random tokens of every scope. Every answer must be below 500, every 4xx a
// problem+json, a refused request must change nothing, and afterwards the database must hold
// the DESIGN §1 invariants.
//
// Seeded: OUTBOXD_FUZZ_SEED=<n> replays a run (a failure prints its seed and fast-check's
// path), OUTBOXD_FUZZ_RUNS=<n> changes the number of runs per property.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";

const SEED = Number(process.env.OUTBOXD_FUZZ_SEED ?? 20261129);
const RUNS = Number(process.env.OUTBOXD_FUZZ_RUNS ?? 200);

let server: TestServer;
let receiver: TestReceiver;
let db: Database;
const tokens = { admin: "", read: "", commit: "", revoked: "" };
const ids = { endpoint: "", patchable: "", delivery: "", event: "", token: "" };
/** Every signing secret an answer showed: each webhook the receiver got must verify with one. */
const secrets: string[] = [];
/** Successful writes per record key, from the answers: a record's version must equal it. */
const writes = new Map<string, number>();

// ---------------------------------------------------------------------------------------------
// Sending requests: fetch for JSON, a raw socket when the bytes themselves are the test.

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function viaFetch(
  method: string,
  path: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await fetch(server.url + path, { method, headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** One HTTP/1.1 request written byte for byte (nothing normalised), answer read to the close. */
function viaSocket(
  method: string,
  target: string,
  headerLines: string[],
  body?: Uint8Array,
): Promise<Answer> {
  const { port } = new URL(server.url);
  const head = [
    `${method} ${target} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    "connection: close",
    ...headerLines,
  ];
  if (body) head.push(`content-length: ${body.byteLength}`);
  const bytes = Buffer.concat([
    Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"),
    body ?? Buffer.alloc(0),
  ]);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // Written, not ended: Bun's server drops the answer to a client that half-closed before it
    // was ready, and a commit's answer waits for its WAL sync.
    // `connection: close` has the server close the socket once it answered.
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(bytes));
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer to ${method} ${target}`)));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      try {
        resolve(parseAnswer(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
  });
}

function parseAnswer(raw: Buffer): Answer {
  const end = raw.indexOf("\r\n\r\n");
  if (end === -1) throw new Error(`no HTTP answer: ${JSON.stringify(raw.toString("latin1").slice(0, 200))}`);
  const [statusLine = "", ...lines] = raw.subarray(0, end).toString("latin1").split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = raw.subarray(end + 4);
  if (headers.get("transfer-encoding")?.includes("chunked")) {
    const parts: Buffer[] = [];
    for (let at = 0; at < body.length; ) {
      const eol = body.indexOf("\r\n", at);
      const size = Number.parseInt(body.subarray(at, eol).toString("latin1"), 16);
      if (!size) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  }
  return { status: Number(statusLine.split(" ")[1]), headers, text: body.toString("utf8") };
}

// ---------------------------------------------------------------------------------------------
// What every answer must be, and what a refused request must not have changed.

/** Bun's HTTP parser refuses some requests itself (a bare 400, 414 or 431): they never reach outboxd. */
function refusedByParser(answer: Answer): boolean {
  return (
    [400, 414, 431].includes(answer.status) &&
    answer.headers.get("content-type") === null &&
    answer.text === ""
  );
}

function expectSound(answer: Answer, what: string): void {
  const where = `${what.slice(0, 400)} → ${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status >= 500) throw new Error(`server error for ${where}`);
  if (answer.status >= 400 && !refusedByParser(answer)) {
    if (!answer.headers.get("content-type")?.startsWith("application/problem+json")) {
      throw new Error(`a ${answer.status} that is not problem+json for ${where}`);
    }
    const problem = JSON.parse(answer.text);
    for (const field of ["type", "title", "detail"]) {
      if (typeof problem[field] !== "string") throw new Error(`problem without ${field} for ${where}`);
    }
    if (problem.status !== answer.status) throw new Error(`problem status differs for ${where}`);
    if (answer.status === 429 && !/^[1-9]\d*$/.test(answer.headers.get("retry-after") ?? "")) {
      throw new Error(`429 without Retry-After for ${where}`);
    }
  }
}

/** Everything a request may change, in one string (the dispatcher's own progress excluded). */
function fingerprint(): string {
  const row = db
    .prepare(
      `SELECT
        (SELECT count(*) || ':' || coalesce(sum(version), 0) || ':' || coalesce(sum(length(data)), 0) || ':' || coalesce(sum(deleted), 0) FROM records) AS records,
        (SELECT count(*) FROM events) AS events,
        (SELECT coalesce(sum(sequence), 0) FROM events) AS sequences,
        (SELECT count(*) FROM deliveries) AS deliveries,
        (SELECT count(*) FROM commits) AS commits,
        (SELECT count(*) || ':' || coalesce(sum(length(url) + length(event_types) + length(coalesce(description, '')) + length(secrets) + disabled), 0) FROM endpoints) AS endpoints,
        (SELECT count(*) || ':' || count(revoked_at) FROM tokens) AS tokens`,
    )
    .get() as Record<string, unknown>;
  return JSON.stringify(row);
}

/** Counts successful record writes from a commit or PUT answer (a replayed answer wrote nothing). */
function noteWrites(path: string, answer: Answer): void {
  if (answer.status >= 300 || answer.headers.get("idempotent-replayed") === "true") return;
  const body = JSON.parse(answer.text);
  const records: { collection: string; id: string }[] = path.startsWith("/v1/commits")
    ? body.records
    : [{ collection: body.collection, id: body.id }];
  for (const r of records) {
    const key = `${r.collection}/${r.id}`;
    writes.set(key, (writes.get(key) ?? 0) + 1);
  }
}

/** How often each status was answered, printed at the end: the suite must reach the write paths. */
const statuses = new Map<number, number>();

function writesRecords(method: string, path: string): boolean {
  return (
    (method === "POST" && path === "/v1/commits") || (method === "PUT" && path.startsWith("/v1/records/"))
  );
}

async function checked(
  send: () => Promise<Answer>,
  what: string,
  method: string,
  path: string,
  mayWrite: boolean,
): Promise<Answer> {
  const before = fingerprint();
  const answer = await send();
  expectSound(answer, what);
  if (answer.status >= 400 || !mayWrite) {
    const after = fingerprint();
    if (after !== before) {
      throw new Error(`${what.slice(0, 400)} → ${answer.status} changed the database: ${before} → ${after}`);
    }
  }
  if (writesRecords(method, path) && answer.status < 300) noteWrites(path, answer);
  if (answer.status < 300 && /^\/v1\/endpoints(\/[^/]+\/rotate-secret)?$/.test(path)) {
    secrets.push(JSON.parse(answer.text).secret);
  }
  statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
  return answer;
}

async function property<T>(arbitrary: fc.Arbitrary<T>, run: (value: T) => Promise<void>, runs = RUNS) {
  try {
    await fc.assert(
      fc.asyncProperty(arbitrary, async (value) => {
        await run(value);
      }),
      { seed: SEED, numRuns: runs, endOnFailure: true },
    );
  } catch (error) {
    (error as Error).message =
      `OUTBOXD_FUZZ_SEED=${SEED} OUTBOXD_FUZZ_RUNS=${runs}\n${(error as Error).message}`;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries.

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((n) => String.fromCharCode(n));
const anyCodePoint = fc.string({ unit: "binary", minLength: 1, maxLength: 1 });
const nameChar = fc.constantFrom(..."abcXYZ019._:-");
const edgeChar = fc.constantFrom(
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\r",
  "\n",
  "\t",
  " ",
  "\u202e", // right-to-left override
  "\u200f",
  "\ufeff",
  "\u2028",
  "\ufffd",
  "\uffff",
  "😀",
  "👩‍👩‍👧‍👦",
  "e\u0301",
  "/",
  "\\",
  "%",
  "'",
  '"',
  ";",
  "?",
  "#",
  "&",
  "=",
  "*",
);
const hostileUnit = fc.oneof(
  { weight: 4, arbitrary: nameChar },
  { weight: 2, arbitrary: edgeChar },
  { weight: 2, arbitrary: anyCodePoint },
  { weight: 1, arbitrary: loneSurrogate },
);
const hostileString = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      "'; DROP TABLE records; --",
      '" OR 1=1 --',
      "1; DELETE FROM events WHERE 1=1",
      "x' UNION SELECT hash FROM tokens --",
      "../../etc/passwd",
      "..%2F..%2Fetc",
      "%00",
      "\u0000",
      "\ud800",
      "\udfff\ud800",
      "__proto__",
      "constructor",
      "prototype",
      "x".repeat(129),
      "y".repeat(300),
      "z".repeat(70_000),
      "$" + "{jndi:ldap://x}", // Log4Shell's shape
      "<script>alert(1)</script>",
      "*",
      "return.*",
      "NaN",
      "1e400",
    ),
  },
  { weight: 5, arbitrary: fc.string({ unit: hostileUnit, maxLength: 40 }) },
);
const hugeNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    2,
    3,
    2 ** 31,
    2 ** 53,
    2 ** 53 + 2,
    Number.MAX_SAFE_INTEGER,
    1e21,
    1e308,
    5e-324,
  ),
  fc.double(),
  fc.integer(),
);
const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: hostileUnit }) },
  { weight: 1, arbitrary: hugeNumber },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [[[]]], { "": "" }) },
);
/** Either a plausible value or anything else: most requests get deep, some fail early. */
const mostly = <T>(plausible: fc.Arbitrary<T>, odds = 12) =>
  fc.oneof(
    { weight: odds, arbitrary: plausible as fc.Arbitrary<unknown> },
    { weight: 1, arbitrary: jsonish },
  );
/** Absent most of the time. */
const rare = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: arbitrary as fc.Arbitrary<unknown> },
  );

const validName = fc.stringMatching(/^[A-Za-z0-9._:-]{1,12}$/);
const name = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("c1", "c2", "orders") },
  { weight: 3, arbitrary: validName },
  { weight: 1, arbitrary: hostileString },
);
const recordId = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("r1", "r2", "r3") },
  { weight: 3, arbitrary: validName },
  { weight: 1, arbitrary: hostileString },
);
const duration = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("24h", "1h", "30s") },
  { weight: 1, arbitrary: hostileString },
  fc.constantFrom("24h", "1s", "1ms", "0s", "0ms", "7d", "99999999999999999999d", "1h30m", "-1s", " 1s"),
  hostileString,
);
const timestamp = fc.oneof(
  fc.constantFrom(
    "2099-01-01T00:00:00Z",
    "2000-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
    "2099-01-01T00:00:00+14:00",
    "2099-13-01T00:00:00Z",
  ),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  hostileString,
);
const FIXED_UUIDS = ["0b7f7a2c-5d1e-4f7a-9c1e-2f4a6b8c0d1e", "7e57ab1e-0000-4000-8000-000000000001"];
const eventId = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...FIXED_UUIDS) },
  { weight: 2, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: hostileString },
);
const endpointIds = () =>
  fc.array(fc.oneof(fc.constant(ids.endpoint), fc.constant("ep_nope"), hostileString), { maxLength: 3 });

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });
const withExtra = (base: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(base, rare(fc.tuple(hostileString, jsonish))).map(([object, extra]) => {
    const copy = Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
    if (extra) {
      const [key, value] = extra as [string, unknown];
      copy[key] = value;
    }
    return copy;
  });

const recordArb = () =>
  withExtra(
    fc.record({
      collection: mostly(name),
      id: mostly(recordId),
      expectedVersion: rare(
        mostly(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 4 }) }, hugeNumber)),
      ),
      data: optional(mostly(fc.dictionary(hostileString, jsonish, { maxKeys: 4 }))),
      delete: rare(mostly(fc.boolean())),
    }),
  );
const eventArb = () =>
  withExtra(
    fc.record({
      type: mostly(
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom("order.created", "a.b", "x", "return.approved") },
          { weight: 1, arbitrary: hostileString },
        ),
      ),
      aggregate: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom("agg/1", "agg/2", "c1/r1") },
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: hostileString },
      ),
      payload: optional(jsonish),
      deliverWithin: rare(mostly(duration)),
      deliverBy: rare(mostly(timestamp)),
      deliverAfter: rare(mostly(timestamp)),
      endpoints: rare(mostly(endpointIds())),
      id: rare(mostly(eventId)),
    }),
  );
/** A commit that is valid by construction (conflicts aside), its strings hostile: reaches the writes. */
const plausibleCommit = () =>
  fc
    .record({
      records: fc.array(
        fc.record({
          collection: fc.constantFrom("c1", "c2", "orders"),
          id: fc.constantFrom("r1", "r2", "r3"),
          data: fc.dictionary(fc.string({ unit: hostileUnit, maxLength: 8 }), jsonish, { maxKeys: 3 }),
          expectedVersion: rare(fc.integer({ min: 0, max: 4 })),
        }),
        { maxLength: 2 },
      ),
      events: fc.array(
        fc.record({
          type: fc.constantFrom("order.created", "a.b", "return.approved"),
          aggregate: fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom("agg/1", "agg/2") },
            { weight: 1, arbitrary: fc.string({ unit: hostileUnit, minLength: 1, maxLength: 20 }) },
          ),
          payload: jsonish,
          id: rare(fc.constantFrom(...FIXED_UUIDS)),
        }),
        { minLength: 1, maxLength: 2 },
      ),
    })
    .map(({ records, events }) => ({
      records: records.map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined))),
      events: events.map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined))),
    }));
const commitBody = () =>
  fc.oneof(
    { weight: 3, arbitrary: plausibleCommit() as fc.Arbitrary<unknown> },
    { weight: 2, arbitrary: fuzzyCommit() },
  );
const fuzzyCommit = () =>
  mostly(
    withExtra(
      fc.record({
        records: optional(mostly(fc.array(recordArb(), { maxLength: 3 }))),
        events: optional(mostly(fc.array(eventArb(), { maxLength: 3 }))),
      }),
    ),
  );
const putBody = () =>
  mostly(
    withExtra(
      fc.record({
        data: mostly(fc.dictionary(hostileString, jsonish, { maxKeys: 4 })),
        events: optional(mostly(fc.array(eventArb(), { maxLength: 2 }))),
      }),
    ),
  );
const endpointBody = () =>
  mostly(
    withExtra(
      fc.record({
        url: mostly(
          fc.oneof(
            fc.constantFrom(receiver.url, "http://127.0.0.1:9/x", "https://[::1]/", "ftp://x/"),
            hostileString,
          ),
        ),
        eventTypes: optional(
          mostly(
            fc.array(fc.oneof(fc.constantFrom("*", "order.*", "a.b", "*.x", ".*"), hostileString), {
              maxLength: 3,
            }),
          ),
        ),
        description: optional(mostly(hostileString)),
        secret: optional(mostly(fc.oneof(fc.constant(`whsec_${"A".repeat(44)}`), hostileString))),
        disabled: optional(mostly(fc.boolean())),
      }),
    ),
  );
const tokenBody = () =>
  mostly(
    fc.record({
      name: mostly(hostileString),
      scopes: mostly(
        fc.array(fc.oneof(fc.constantFrom("read", "commit", "admin"), hostileString), { maxLength: 3 }),
      ),
    }),
  );
const replayBody = () =>
  mostly(
    withExtra(
      fc.record({
        status: optional(mostly(fc.constantFrom("dead", "pending"))),
        endpoint: optional(mostly(fc.oneof(fc.constant(ids.endpoint), hostileString))),
        reason: optional(mostly(fc.oneof(fc.constant("deadline_exceeded"), hostileString))),
        since: optional(mostly(timestamp)),
        deliverWithin: optional(mostly(duration)),
      }),
    ),
  );

const anyToken = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<keyof typeof tokens>("admin", "commit", "read") },
    { weight: 1, arbitrary: fc.constantFrom<"revoked" | "none" | "garbage">("revoked", "none", "garbage") },
  );
function authorization(which: keyof typeof tokens | "none" | "garbage"): Record<string, string> {
  if (which === "none") return {};
  if (which === "garbage") return { authorization: "Bearer otk_garbage" };
  return { authorization: `Bearer ${tokens[which]}` };
}

/** Percent-encoded for a URL path; a lone surrogate (which no URL can carry) becomes U+FFFD. */
function encodeSegment(text: string): string {
  return encodeURIComponent(
    text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"),
  );
}

/** A path segment as a client might encode it: percent-encoded, or raw when it is safe to. */
const segment = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "..",
      "..%2F..",
      "..%2f..%2fetc%2fpasswd",
      "%2e%2e",
      "%2e%2e%2f",
      ".%2e",
      "%00",
      "a%00b",
      "%ff",
      "%e2%80%ae",
      "%ed%a0%80",
      "%F0%9F%98%80",
      "%",
      "%zz",
      "%25",
      ";",
      "a;b=c",
      "~",
      "'",
      "x".repeat(129),
      "x".repeat(5000),
      "ep_nope",
      "dlv_nope",
      "tok_env_admin",
    ),
  },
  { weight: 3, arbitrary: validName },
  {
    weight: 2,
    arbitrary: hostileString.filter((s) => s.length < 2000).map(encodeSegment),
  },
  { weight: 1, arbitrary: fc.constant("") },
);
const ROUTES: [string, string][] = [
  ["GET", "/v1/records/{a}/{b}"],
  ["PUT", "/v1/records/{a}/{b}"],
  ["GET", "/v1/records/{a}"],
  ["GET", "/v1/events/{a}"],
  ["GET", "/v1/deliveries/{a}"],
  ["GET", "/v1/deliveries/{a}/attempts"],
  ["POST", "/v1/deliveries/{a}/replay"],
  ["GET", "/v1/endpoints/{a}"],
  ["PATCH", "/v1/endpoints/{a}"],
  ["DELETE", "/v1/endpoints/{a}"],
  ["POST", "/v1/endpoints/{a}/enable"],
  ["POST", "/v1/endpoints/{a}/rotate-secret"],
  ["GET", "/v1/endpoints/{a}/secret"],
  ["POST", "/v1/endpoints/{a}/test"],
  ["DELETE", "/v1/tokens/{a}"],
  ["GET", "/snippet/{a}"],
  ["GET", "/{a}/{b}"],
];
const LISTS = [
  "/v1/events",
  "/v1/deliveries",
  "/v1/endpoints",
  "/v1/tokens",
  "/v1/records/c1",
  "/v1/attempts",
  "/v1/stats/history",
];
const queryValue = fc.oneof(
  fc.constantFrom("0", "1", "500", "501", "-1", "1e400", "1.5", "0x10", "", "NaN", "99999999999999999999"),
  fc.constantFrom(
    "pending",
    "delivered",
    "dead",
    "deadline_exceeded",
    "endpoint_deleted",
    "agg/1",
    "order.created",
  ),
  segment,
);
const queryKey = fc.oneof(
  fc.constantFrom(
    "limit",
    "after",
    "status",
    "endpoint",
    "reason",
    "aggregate",
    "type",
    "window",
    "delivery",
  ),
  segment,
);

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  receiver = startReceiver();
  server = await startServer({ OUTBOXD_RATE_LIMIT: "0", OUTBOXD_RETRY_BASE: "100ms" });
  tokens.admin = server.token;
  for (const scope of ["read", "commit"] as const) {
    tokens[scope] = expectStatus(
      await server.request("POST", "/v1/tokens", { name: scope, scopes: [scope] }),
      201,
    ).token;
  }
  const revoked = expectStatus(
    await server.request("POST", "/v1/tokens", { name: "gone", scopes: ["admin"] }),
    201,
  );
  tokens.revoked = revoked.token;
  expectStatus(await server.request("DELETE", `/v1/tokens/${revoked.id}`), 200);
  ids.token = revoked.id;
  for (const key of ["endpoint", "patchable"] as const) {
    const created = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
    ids[key] = created.id;
    secrets.push(created.secret);
  }
  const committed = expectStatus(
    await server.request("POST", "/v1/commits", {
      records: [{ collection: "c1", id: "r1", data: { seeded: true } }],
      events: [{ type: "order.created" }],
    }),
    201,
  );
  writes.set("c1/r1", 1);
  ids.event = committed.events[0].id;
  ids.delivery = committed.events[0].deliveries[0].id;
  db = new Database(join(server.dir, "outboxd.db"), { readonly: true });
});

afterAll(async () => {
  console.log(
    `hostile suite, seed ${SEED}: statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
  );
  db?.close();
  await server?.stop();
  await receiver?.stop();
});

describe("hostile requests never cause a 500, a non-problem 4xx or a partial write", () => {
  test("JSON bodies at every route that reads one, with tokens of every scope", async () => {
    const request = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          method: fc.constant("POST"),
          path: fc.constant("/v1/commits"),
          body: commitBody(),
        }),
      },
      fc.record({
        method: fc.constant("PUT"),
        path: fc.tuple(name, recordId).map(([c, i]) => `/v1/records/${encodeSegment(c)}/${encodeSegment(i)}`),
        body: putBody(),
      }),
      fc.record({ method: fc.constant("POST"), path: fc.constant("/v1/endpoints"), body: endpointBody() }),
      fc.record({
        method: fc.constant("PATCH"),
        path: fc.constant("/v1/endpoints/{endpoint}"),
        body: endpointBody(),
      }),
      fc.record({ method: fc.constant("POST"), path: fc.constant("/v1/tokens"), body: tokenBody() }),
      fc.record({
        method: fc.constant("POST"),
        path: fc.constant("/v1/deliveries/replay"),
        body: replayBody(),
      }),
      fc.record({
        method: fc.constant("POST"),
        path: fc.constant("/v1/deliveries/{delivery}/replay"),
        body: replayBody(),
      }),
    );
    const headers = fc.record({
      "idempotency-key": rare(fc.oneof(fc.constantFrom("k1", "k2", "x".repeat(256)), validName)),
      "if-match": rare(fc.constantFrom('"1"', '"2"', "1", 'W/"1"', '"0"', '"99999999999999999"', "*", "")),
      "if-none-match": rare(fc.constantFrom("*", '"1"', "")),
      traceparent: rare(
        fc.constantFrom("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "garbage"),
      ),
      "content-type": rare(
        fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded"),
      ),
    });
    const writer = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom<"admin" | "commit">("admin", "commit") },
      { weight: 1, arbitrary: anyToken() },
    );
    await property(
      fc.tuple(request, headers, writer),
      async ([req, extra, who]) => {
        const path = req.path.replace("{endpoint}", ids.patchable).replace("{delivery}", ids.delivery);
        const sent = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined)) as Record<
          string,
          string
        >;
        const body = JSON.stringify(req.body) ?? "null";
        await checked(
          () =>
            viaFetch(req.method, path, body, {
              "content-type": "application/json",
              ...sent,
              ...authorization(who),
            }),
          `${req.method} ${path} as ${who} ${body.slice(0, 200)}`,
          req.method,
          path,
          who === "admin" || who === "commit",
        );
      },
      2 * RUNS,
    );
  });

  test("bodies that are not JSON, or JSON at its edges: invalid UTF-8, NUL, BOM, deep nesting, duplicate keys, 1e400", async () => {
    const fixed = fc
      .constantFrom(
        "[".repeat(10_000) + "]".repeat(10_000),
        `{"records": [{"collection": "c1", "id": "deep", "data": {"a": ${"[".repeat(10_000)}${"]".repeat(10_000)}}}]}`,
        `{"events": [{"type": "a.b", "aggregate": "agg/1", "payload": ${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}]}`,
        '{"records": [], "records": [{"collection": "c1", "id": "dup", "data": {}}], "events": null}',
        '{"records": [{"collection": "c1", "id": "dup2", "id": "../x", "data": {}}]}',
        '{"events": [{"type": "a.b", "aggregate": "agg/1", "payload": 1e400}]}',
        '{"records": [{"collection": "c1", "id": "r1", "expectedVersion": 1e400, "data": {}}]}',
        '{"events": [{"type": "a.b", "aggregate": "agg/\\ud800", "payload": "\\udfff"}]}',
        '{"records": [{"collection": "c1", "id": "nul", "data": {"\\u0000": "\\u0000"}}]}',
        '\ufeff{"records": [{"collection": "c1", "id": "bom", "data": {}}]}',
        '{"__proto__": {"admin": true}, "records": [{"collection": "c1", "id": "proto", "data": {"__proto__": {"x": 1}}}]}',
        "",
        "null",
        "{",
        "{}",
        '{"records": [null]}',
        '{"events": [{"type": "a.b", "aggregate": "agg/1", "deliverWithin": "99999999999999999999999d"}]}',
      )
      .map((text) => new TextEncoder().encode(text));
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.constantFrom(
        new Uint8Array([0xff, 0xfe]),
        new Uint8Array([0xc0, 0xaf]), // overlong '/'
        new Uint8Array([0xed, 0xa0, 0x80]), // a surrogate encoded as UTF-8
        new Uint8Array([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
        new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]), // truncated sequence in a string
      ),
      fixed,
    );
    const route = fc.constantFrom(
      "POST /v1/commits",
      "PUT /v1/records/c1/raw",
      "POST /v1/endpoints",
      "POST /v1/tokens",
      "POST /v1/deliveries/replay",
    );
    await property(fc.tuple(bytes, route, anyToken()), async ([body, line, who]) => {
      const [method = "", path = ""] = line.split(" ");
      const auth = authorization(who).authorization;
      await checked(
        () =>
          viaSocket(
            method,
            path,
            ["content-type: application/json", ...(auth ? [`authorization: ${auth}`] : [])],
            body,
          ),
        `${line} as ${who} with ${body.byteLength} bytes ${Buffer.from(body.subarray(0, 40)).toString("hex")}`,
        method,
        path,
        who === "admin" || who === "commit",
      );
    });
  });

  test("ids in paths: traversal, NUL, invalid percent-encoding, unicode, overlong", async () => {
    await property(
      fc.tuple(fc.constantFrom(...ROUTES), segment, segment, anyToken()),
      async ([[method, template], a, b, who]) => {
        const target = template.replace("{a}", a).replace("{b}", b);
        const auth = authorization(who).authorization;
        const body =
          method === "PUT" || method === "PATCH" ? new TextEncoder().encode('{"data": {}}') : undefined;
        const lines = [
          ...(auth ? [`authorization: ${auth}`] : []),
          ...(body ? ["content-type: application/json"] : []),
        ];
        await checked(
          () => viaSocket(method, target, lines, body),
          `${method} ${target} as ${who}`,
          method,
          target,
          true,
        );
      },
    );
  });

  test("query strings: huge, negative and malformed limits and cursors, repeated and unknown parameters", async () => {
    const query = fc.array(fc.tuple(queryKey, queryValue), { maxLength: 4 });
    await property(fc.tuple(fc.constantFrom(...LISTS), query, anyToken()), async ([path, pairs, who]) => {
      const target = `${path}?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`;
      const auth = authorization(who).authorization;
      await checked(
        () => viaSocket("GET", target, auth ? [`authorization: ${auth}`] : []),
        `GET ${target} as ${who}`,
        "GET",
        target,
        false,
      );
    });
  });

  test("headers: injection attempts, obs-text bytes, odd Authorization, If-Match and Idempotency-Key values", async () => {
    const value = fc.oneof(
      fc.constantFrom(
        "x\r\nX-Injected: 1",
        "x\r\n\r\nGET /v1/tokens HTTP/1.1",
        "\u00ff\u00fe",
        "Bearer",
        "Bearer ",
        "Bearer  x  y",
        "bearer\totk_x",
        `Bearer ${"a".repeat(8000)}`,
        "Basic YTpi",
        '"1", "2"',
        "W/",
        "*, *",
        "00-00000000000000000000000000000000-0000000000000000-00",
      ),
      fc.string({
        unit: fc.integer({ min: 0x20, max: 0xff }).map((n) => String.fromCharCode(n)),
        maxLength: 60,
      }),
    );
    const header = fc.constantFrom(
      "authorization",
      "idempotency-key",
      "if-match",
      "if-none-match",
      "traceparent",
      "content-type",
      "content-length",
      "transfer-encoding",
      "x-forwarded-for",
    );
    const route = fc.constantFrom(
      "POST /v1/commits",
      "PUT /v1/records/c2/h",
      "GET /v1/events",
      "GET /v1/records/c1/r1",
    );
    await property(fc.tuple(route, header, value, anyToken()), async ([line, name, raw, who]) => {
      const [method = "", path = ""] = line.split(" ");
      const auth = authorization(who).authorization;
      const body =
        method === "GET"
          ? undefined
          : new TextEncoder().encode(
              path.startsWith("/v1/commits")
                ? '{"records": [{"collection": "c2", "id": "h", "data": {"h": 1}}]}'
                : '{"data": {"h": 1}}',
            );
      const lines = [
        ...(auth && name !== "authorization" ? [`authorization: ${auth}`] : []),
        ...(body && name !== "content-type" ? ["content-type: application/json"] : []),
        `${name}: ${raw}`,
      ];
      // A request the HTTP parser refuses outright (a second Content-Length, a bad
      // Transfer-Encoding) never reaches outboxd: then only "no 500 and nothing written" holds.
      const before = fingerprint();
      const answer = await viaSocket(method, path, lines, body);
      if (answer.status >= 500) throw new Error(`server error for ${line} ${name}: ${JSON.stringify(raw)}`);
      if (answer.headers.get("content-type") !== null || answer.status < 400) {
        expectSound(answer, `${line} ${name}: ${JSON.stringify(raw)}`);
        if (writesRecords(method, path) && answer.status < 300) noteWrites(path, answer);
      } else if (fingerprint() !== before) {
        throw new Error(
          `a request refused by the HTTP parser changed the database: ${name}: ${JSON.stringify(raw)}`,
        );
      }
      if (answer.status >= 400 && fingerprint() !== before) {
        throw new Error(`${line} ${name}: ${JSON.stringify(raw)} → ${answer.status} changed the database`);
      }
    });
  });
});

describe("afterwards the database holds the DESIGN §1 invariants", () => {
  test("nothing was dropped and SQLite finds no corruption", () => {
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
    ).map((t) => t.name);
    for (const table of ["records", "events", "endpoints", "deliveries", "attempts", "commits", "tokens"]) {
      expect(tables).toContain(table);
    }
    expect((db.prepare("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe(
      "ok",
    );
    // The fuzzing did reach the write paths.
    expect((db.prepare("SELECT count(*) AS n FROM commits").get() as { n: number }).n).toBeGreaterThan(20);
  });

  test("every record's version is the number of successful writes to it; none below 1", () => {
    const rows = db.prepare("SELECT collection, id, version FROM records").all() as {
      collection: string;
      id: string;
      version: number;
    }[];
    for (const row of rows) {
      expect(row.version).toBeGreaterThanOrEqual(1);
      expect({ key: `${row.collection}/${row.id}`, version: row.version }).toEqual({
        key: `${row.collection}/${row.id}`,
        version: writes.get(`${row.collection}/${row.id}`) ?? -1,
      });
    }
    expect(rows.map((r) => `${r.collection}/${r.id}`).sort()).toEqual([...writes.keys()].sort());
  });

  test("every aggregate's events are numbered 1..n without gaps", () => {
    const gaps = db
      .prepare(
        `SELECT aggregate, count(*) AS n, min(sequence) AS first, max(sequence) AS last
         FROM events GROUP BY aggregate HAVING first != 1 OR last != n`,
      )
      .all();
    expect(gaps).toEqual([]);
  });

  test("every event belongs to a stored commit; every delivery to an existing event, with its aggregate and sequence", () => {
    expect(
      db.prepare("SELECT id FROM events WHERE commit_id NOT IN (SELECT id FROM commits) LIMIT 5").all(),
    ).toEqual([]);
    expect(
      db
        .prepare(
          `SELECT d.id FROM deliveries d LEFT JOIN events e ON e.id = d.event_id
           WHERE e.id IS NULL OR e.aggregate != d.aggregate OR e.sequence != d.sequence OR e.type != d.event_type LIMIT 5`,
        )
        .all(),
    ).toEqual([]);
    expect(
      db
        .prepare(
          `SELECT id FROM deliveries WHERE endpoint_id NOT IN (SELECT id FROM endpoints)
           AND NOT (status = 'dead' AND dead_reason = 'endpoint_deleted') LIMIT 5`,
        )
        .all(),
    ).toEqual([]);
    expect(
      db
        .prepare("SELECT pos FROM attempts WHERE delivery_id NOT IN (SELECT id FROM deliveries) LIMIT 5")
        .all(),
    ).toEqual([]);
    expect(
      db
        .prepare("SELECT id FROM deliveries WHERE status NOT IN ('pending', 'delivered', 'dead') LIMIT 5")
        .all(),
    ).toEqual([]);
  });

  test("every due delivery to the receiver was delivered, every webhook signed: hostile payloads send", async () => {
    const due = () =>
      (
        db
          .prepare(
            "SELECT count(*) AS n FROM deliveries WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ?",
          )
          .get(ids.endpoint, Date.now()) as { n: number }
      ).n;
    await waitFor("the dispatcher to deliver every due delivery", () => due() === 0, 30_000);
    const failed = db
      .prepare(
        `SELECT a.delivery_id, a.status_code, a.error FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
         WHERE d.endpoint_id = ? AND (a.error IS NOT NULL OR a.status_code NOT BETWEEN 200 AND 299) LIMIT 5`,
      )
      .all(ids.endpoint);
    expect(failed).toEqual([]);
    const delivered = (
      db
        .prepare("SELECT count(*) AS n FROM deliveries WHERE endpoint_id = ? AND status = 'delivered'")
        .get(ids.endpoint) as { n: number }
    ).n;
    expect(delivered).toBeGreaterThan(10);
    expect(receiver.received.length).toBeGreaterThanOrEqual(delivered);
    for (const request of receiver.received) {
      const headers = Object.fromEntries(request.headers.entries());
      const verified = secrets.some((secret) => {
        try {
          new Webhook(secret).verify(request.body, headers);
          return true;
        } catch {
          return false;
        }
      });
      if (!verified) throw new Error(`a webhook no known secret verifies: ${request.body.slice(0, 300)}`);
    }
  });

  test("the server still answers, and no token or secret hash ever reached a response", async () => {
    expectStatus(await server.request("GET", "/v1/stats"), 200);
    const hashes = (db.prepare("SELECT hash FROM tokens").all() as { hash: string }[]).map((r) => r.hash);
    const listed = JSON.stringify(expectStatus(await server.request("GET", "/v1/tokens?limit=500"), 200));
    for (const hash of hashes) expect(listed).not.toContain(hash);
  });
});
