// No secrets in logs (DESIGN §8: tokens never go to logs): every log line of a workload that
// creates tokens and endpoints with secrets, commits payloads carrying a marker, delivers,
// fails in every way a send can (500, 410, refused connection, a certificate that does not
// verify), rotates secrets and hits the one 500 a client can reach (an endpoint whose secrets
// were sealed with another master key) — and not one line holds a token, a whsec_ secret, an
// Authorization value, a payload or record marker, a receiver's answer or an endpoint URL's query.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createLogger } from "../../src/ops/log.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";
import { PINNED_TEST_CERT, PINNED_TEST_KEY } from "./fixtures/tls.ts";

const lines: string[] = [];
const receivers: TestReceiver[] = [];
let tls: ReturnType<typeof Bun.serve>;
let server: TestServer;

const MARK = crypto.randomUUID().replaceAll("-", "");
const PAYLOAD_MARKER = `payload-marker-${MARK}`;
const DATA_MARKER = `data-marker-${MARK}`;
const RESPONSE_MARKER = `response-marker-${MARK}`;
const URL_SECRET = `url-secret-${MARK}`;
const WRONG_TOKEN = `otk_wrong-${MARK}`;
const BASIC = btoa(`user:basic-${MARK}`);
const SECRET = `whsec_${Buffer.from(`endpoint-secret-${MARK}`.padEnd(32, "!")).toString("base64")}`;
/** Everything that must never appear in a log line; filled as the workload learns them. */
const forbidden: string[] = [
  PAYLOAD_MARKER,
  DATA_MARKER,
  RESPONSE_MARKER,
  URL_SECRET,
  WRONG_TOKEN,
  BASIC,
  SECRET,
];

beforeAll(async () => {
  receivers.push(
    startReceiver(() => new Response(`{"result":"applied","echo":"${RESPONSE_MARKER}"}`, { status: 200 })),
    startReceiver(() => new Response(`failing: ${RESPONSE_MARKER}`, { status: 500 })),
    startReceiver(() => new Response(`gone: ${RESPONSE_MARKER}`, { status: 410 })),
  );
  tls = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: PINNED_TEST_CERT, key: PINNED_TEST_KEY },
    fetch: () => new Response(RESPONSE_MARKER),
  });
  server = await startServer(
    {
      OUTBOXD_RETRY_BASE: "50ms",
      OUTBOXD_RETRY_CAP: "200ms",
      OUTBOXD_SEND_TIMEOUT: "3s",
      OUTBOXD_LEASE: "10s",
    },
    { logger: createLogger("debug", (line) => lines.push(line)) },
  );
  forbidden.push(server.token);
});

afterAll(async () => {
  await server.stop();
  for (const receiver of receivers) await receiver.stop();
  tls.stop(true);
});

test("a workload of every kind logs no token, secret, Authorization value, payload or answer", async () => {
  const [ok, failing, gone] = receivers as [TestReceiver, TestReceiver, TestReceiver];
  const admin = server.request;

  // Tokens, and requests with them, without them, and with wrong ones.
  const tokens: Record<string, string> = {};
  for (const scope of ["read", "commit"]) {
    const created = expectStatus(
      await admin("POST", "/v1/tokens", { name: `logs-${scope}`, scopes: [scope] }),
      201,
    );
    tokens[scope] = created.token;
    forbidden.push(created.token, created.token.slice("otk_".length));
  }
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  expectProblem(await admin("GET", "/v1/events", undefined, as(WRONG_TOKEN)), 401);
  expectProblem(await admin("GET", "/v1/events", undefined, { authorization: `Basic ${BASIC}` }), 401);
  expectProblem(await admin("GET", "/v1/endpoints", undefined, { authorization: "" }), 401);
  expectProblem(
    await admin("POST", "/v1/tokens", { name: "x", scopes: ["read"] }, as(tokens.commit as string)),
    403,
  );

  // Endpoints with secrets: delivered, failing, gone, refused, untrusted certificate.
  const endpoint = async (url: string, secret?: string) => {
    const created = expectStatus(
      await admin("POST", "/v1/endpoints", { url, ...(secret ? { secret } : {}) }),
      201,
    );
    forbidden.push(created.secret, created.secret.slice("whsec_".length));
    return created.id as string;
  };
  const ids = {
    ok: await endpoint(`${ok.url}?token=${URL_SECRET}`, SECRET),
    failing: await endpoint(failing.url),
    gone: await endpoint(gone.url),
    refused: await endpoint(`http://127.0.0.1:9/hook?token=${URL_SECRET}`),
    untrusted: await endpoint(`https://127.0.0.1:${tls.port}/hook?token=${URL_SECRET}`),
    sealedElsewhere: await endpoint(`${ok.url}?token=${URL_SECRET}`),
  };
  const rotated = expectStatus(await admin("POST", `/v1/endpoints/${ids.failing}/rotate-secret`), 200).secret;
  forbidden.push(rotated, rotated.slice("whsec_".length));
  expect(expectStatus(await admin("GET", `/v1/endpoints/${ids.ok}/secret`), 200).secret).toBe(SECRET);
  expectProblem(
    await admin("POST", "/v1/endpoints", `{"url": "${ok.url}", "secret": ${SECRET.replace(/[+/=]/g, "A")}}`),
    400,
  );

  // The 500 a client can reach: secrets sealed with another master key.
  const db = new Database(join(server.dir, "outboxd.db"));
  db.prepare("UPDATE endpoints SET secrets = ? WHERE id = ?").run(
    `aesgcm:${Buffer.alloc(60, 9).toString("base64")}`,
    ids.sealedElsewhere,
  );
  db.close();
  const internal = await admin("GET", `/v1/endpoints/${ids.sealedElsewhere}/secret`);
  expect(internal.status).toBe(500);
  expect(internal.body.detail).toBe("The server failed unexpectedly; see its log.");
  expect((await admin("POST", `/v1/endpoints/${ids.sealedElsewhere}/test`)).status).toBe(500);

  // Commits, records, idempotent retries, conflicts, with markers in payloads and data.
  for (let i = 0; i < 5; i++) {
    const body = {
      records: [{ collection: "logs", id: `r${i}`, data: { note: DATA_MARKER } }],
      events: [{ type: "logs.written", payload: { note: PAYLOAD_MARKER, i } }],
    };
    const headers = { ...as(tokens.commit as string), "idempotency-key": `key-${i}` };
    expectStatus(await admin("POST", "/v1/commits", body, headers), 201);
    expectStatus(await admin("POST", "/v1/commits", body, headers), 201); // replayed
  }
  expectProblem(
    await admin("POST", "/v1/commits", {
      records: [{ collection: "logs", id: "r0", expectedVersion: 7, data: { note: DATA_MARKER } }],
    }),
    409,
  );
  expectProblem(
    await admin("POST", "/v1/commits", { events: [{ type: `bad type ${PAYLOAD_MARKER}`, aggregate: "a" }] }),
    422,
  );
  expectStatus(
    await admin("PUT", "/v1/records/logs/put", { data: { note: DATA_MARKER } }, as(tokens.commit as string)),
    201,
  );
  expectStatus(await admin("GET", "/v1/records/logs/put", undefined, as(tokens.read as string)), 200);

  const pinged = expectStatus(await admin("POST", `/v1/endpoints/${ids.ok}/test`), 200);
  expect(pinged.responsePrefix).toContain(RESPONSE_MARKER);

  // Deliveries: wait until every endpoint has been tried (the good one delivered).
  const attemptsOf = async (id: string) =>
    expectStatus(await admin("GET", `/v1/deliveries?endpoint=${id}&limit=500`), 200).data;
  await waitFor("every endpoint tried", async () => {
    for (const [name, id] of Object.entries(ids)) {
      const deliveries = await attemptsOf(id);
      if (deliveries.length !== 5) return false;
      if (
        name === "ok"
          ? deliveries.some((d: { status: string }) => d.status !== "delivered")
          : deliveries.every((d: { attemptCount: number }) => d.attemptCount === 0)
      )
        return false;
    }
    return true;
  });
  expect(ok.received.some((r) => r.body.includes(PAYLOAD_MARKER))).toBe(true);

  // The log saw all of it…
  const log = lines.join("");
  for (const msg of ["request", "delivery attempt", "unhandled error"])
    expect(log).toContain(`"msg":"${msg}"`);
  expect(log).toContain("cannot open the endpoint's signing secrets");
  expect(log).toContain('"status":401');
  expect(log).toContain("ECONNREFUSED");
  // …and none of the secrets.
  const leaks = forbidden.filter((secret) => log.includes(secret));
  expect(leaks).toEqual([]);
  expect(log).not.toContain("whsec_");
  expect(log).not.toContain("otk_");
  expect(log).not.toMatch(/bearer\s/i);
  expect(log).not.toContain("aesgcm:");
  // Every line is one JSON object.
  for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
});
