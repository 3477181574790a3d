// The wire format (DESIGN §4), checked at a real receiver with an independent implementation:
// the `standardwebhooks` npm library verifies every signature, so a mistake shared by our signer
// and our own snippet cannot hide. Also secret rotation and the endpoint test route (§3).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { SecretBox, type StoredSecret } from "../../src/endpoints/secrets.ts";
import {
  commitEvents,
  exec,
  expectStatus,
  headerObject,
  onlyDelivery,
  type Rig,
  requestsFor,
  sql,
  startRig,
  waitForRow,
  waitUntil,
} from "./harness.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// test/helpers/server.ts seals endpoint secrets with this master key.
const box = new SecretBox(Buffer.alloc(32, 7).toString("base64"));

describe("webhook wire format", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({
      OUTBOXD_RETRY_BASE: "50ms",
      OUTBOXD_RETRY_CAP: "100ms",
      OUTBOXD_SECRET_GRACE: "90s",
    });
  });
  afterAll(async () => {
    await rig.stop();
  });

  test("a delivery verifies with standardwebhooks and carries exactly the DESIGN §4 headers and body", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const before = Math.floor(Date.now() / 1000);
    const [event] = await commitEvents(
      rig.server,
      [{ type: "return.approved", aggregate: "returns/r-123", payload: { returnId: "r-123", n: [1, 2] } }],
      { traceparent },
    );
    const id = event?.id as string;
    const [request] = await waitUntil(
      "the webhook",
      () => requestsFor(rig.receiver, id).length > 0 && requestsFor(rig.receiver, id),
    );
    const after = Math.floor(Date.now() / 1000);
    if (!request) throw new Error("no request");

    const verified = new Webhook(rig.secret).verify(request.body, headerObject(request.headers));
    expect(verified).toEqual(JSON.parse(request.body));

    const h = request.headers;
    expect(h.get("content-type")).toBe("application/json");
    expect(h.get("user-agent")).toMatch(/^outboxd\/\d+\.\d+\.\d+/);
    expect(h.get("webhook-id")).toBe(id);
    expect(id).toMatch(UUID);
    const timestamp = h.get("webhook-timestamp") as string;
    expect(timestamp).toMatch(/^\d+$/);
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(after);
    expect(h.get("webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(h.get("outbox-aggregate")).toBe("returns/r-123");
    expect(h.get("outbox-sequence")).toBe(String(event?.sequence));
    expect(h.get("outbox-attempt")).toBe("1");
    expect(h.get("traceparent")).toBe(traceparent);

    const body = JSON.parse(request.body);
    expect(Object.keys(body)).toEqual([
      "id",
      "type",
      "timestamp",
      "aggregate",
      "sequence",
      "previousSequence",
      "data",
    ]);
    expect(body).toMatchObject({
      id,
      type: "return.approved",
      aggregate: "returns/r-123",
      sequence: event?.sequence,
      data: { returnId: "r-123", n: [1, 2] },
    });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);

    // The signature covers the raw bytes: another secret or one changed byte fails.
    const other = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
    expect(() => new Webhook(other).verify(request.body, headerObject(request.headers))).toThrow(
      WebhookVerificationError,
    );
    const tampered = request.body.replace('"returnId":"r-123"', '"returnId":"r-124"');
    expect(tampered).not.toBe(request.body);
    expect(() => new Webhook(rig.secret).verify(tampered, headerObject(request.headers))).toThrow(
      WebhookVerificationError,
    );
  });

  test("without a traceparent on the commit no traceparent header is sent; odd aggregates survive the header", async () => {
    const aggregate = "orders/ö 42%";
    const [event] = await commitEvents(rig.server, [{ aggregate }]);
    const [request] = await waitUntil(
      "the webhook",
      () =>
        requestsFor(rig.receiver, event?.id as string)[0] && requestsFor(rig.receiver, event?.id as string),
    );
    expect(request?.headers.get("traceparent")).toBeNull();
    // Header values are ASCII: the informational header is percent-encoded where it must be.
    expect(decodeURIComponent(request?.headers.get("outbox-aggregate") as string)).toBe(aggregate);
    expect(JSON.parse(request?.body as string).aggregate).toBe(aggregate);
  });

  test("every retry keeps webhook-id, re-signs with its own timestamp and counts outbox-attempt", async () => {
    let calls = 0;
    rig.receiver.respond = (request) => {
      if (request.headers.get("outbox-aggregate") !== "retry/1") return new Response("ok");
      calls += 1;
      return new Response("not yet", { status: calls < 3 ? 500 : 200 });
    };
    const [event] = await commitEvents(rig.server, [{ aggregate: "retry/1" }]);
    const id = event?.id as string;
    await waitForRow(rig.server, onlyDelivery(event), "delivered", (row) => row.status === "delivered");

    const requests = requestsFor(rig.receiver, id);
    expect(requests.map((r) => r.headers.get("outbox-attempt"))).toEqual(["1", "2", "3"]);
    const webhook = new Webhook(rig.secret);
    let lastTimestamp = 0;
    for (const request of requests) {
      expect(request.headers.get("webhook-id")).toBe(id);
      const timestamp = Number(request.headers.get("webhook-timestamp"));
      expect(timestamp).toBeGreaterThanOrEqual(lastTimestamp);
      expect(timestamp).toBeLessThanOrEqual(Math.ceil(request.at / 1000));
      lastTimestamp = timestamp;
      expect(webhook.verify(request.body, headerObject(request.headers))).toMatchObject({ id });
    }
    // The signed body is the same on every attempt (only the signature's timestamp moves).
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    rig.receiver.respond = () => new Response("ok");
  });

  test("after rotate-secret both secrets sign during the grace, and only the new one after it", async () => {
    const rotatedAt = Date.now();
    const rotated = expectStatus(
      await rig.server.request("POST", `/v1/endpoints/${rig.endpointId}/rotate-secret`),
      200,
    );
    const newSecret = rotated.secret as string;
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(newSecret).not.toBe(rig.secret);
    const shown = expectStatus(
      await rig.server.request("GET", `/v1/endpoints/${rig.endpointId}/secret`),
      200,
    );
    expect(shown).toEqual({ secret: newSecret, previous: [rig.secret] });

    // The old secret expires OUTBOXD_SECRET_GRACE (90s) after the rotation.
    const [stored] = await sql<{ secrets: string }>(
      rig.server,
      "SELECT secrets FROM endpoints WHERE id = :id",
      {
        id: rig.endpointId,
      },
    );
    const secrets = box.open(stored?.secrets as string);
    expect(secrets.map((s) => s.secret)).toEqual([newSecret, rig.secret]);
    expect(secrets[0]?.expiresAt).toBeNull();
    expect(secrets[1]?.expiresAt).toBeGreaterThanOrEqual(rotatedAt + 90_000);
    expect(secrets[1]?.expiresAt).toBeLessThanOrEqual(Date.now() + 90_000);

    const during = await deliverOne("rotation/during");
    const entries = (during.headers.get("webhook-signature") as string).split(" ");
    expect(entries).toHaveLength(2);
    for (const entry of entries) expect(entry).toMatch(/^v1,/);
    new Webhook(newSecret).verify(during.body, headerObject(during.headers));
    new Webhook(rig.secret).verify(during.body, headerObject(during.headers));

    // Move the grace into the past instead of waiting 90 s (updated_at too, as every change of an
    // endpoint does: the dispatcher uses the endpoint it knows while its version is unchanged).
    const expired: StoredSecret[] = secrets.map((s) =>
      s.expiresAt === null ? s : { ...s, expiresAt: Date.now() - 1 },
    );
    await exec(
      rig.server,
      "UPDATE endpoints SET secrets = :secrets, updated_at = updated_at + 1 WHERE id = :id",
      {
        id: rig.endpointId,
        secrets: box.seal(expired),
      },
    );
    const shownAfter = expectStatus(
      await rig.server.request("GET", `/v1/endpoints/${rig.endpointId}/secret`),
      200,
    );
    expect(shownAfter).toEqual({ secret: newSecret, previous: [] });

    const afterGrace = await deliverOne("rotation/after");
    expect((afterGrace.headers.get("webhook-signature") as string).split(" ")).toHaveLength(1);
    new Webhook(newSecret).verify(afterGrace.body, headerObject(afterGrace.headers));
    expect(() => new Webhook(rig.secret).verify(afterGrace.body, headerObject(afterGrace.headers))).toThrow(
      WebhookVerificationError,
    );
  });

  async function deliverOne(aggregate: string) {
    const [event] = await commitEvents(rig.server, [{ aggregate }]);
    const [request] = await waitUntil(
      `the webhook of ${aggregate}`,
      () =>
        requestsFor(rig.receiver, event?.id as string)[0] && requestsFor(rig.receiver, event?.id as string),
    );
    if (!request) throw new Error("no request");
    return request;
  }
});

describe("POST /v1/endpoints/{id}/test", () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({}, () => new Response('{"pong":true}', { status: 202 }));
  });
  afterAll(async () => {
    await rig.stop();
  });

  test("sends a signed outboxd.ping now, stores nothing, and reports the receiver's answer", async () => {
    const result = expectStatus(
      await rig.server.request("POST", `/v1/endpoints/${rig.endpointId}/test`),
      200,
    );
    expect(result).toMatchObject({ statusCode: 202, error: null, responsePrefix: '{"pong":true}' });
    expect(typeof result.durationMs).toBe("number");

    expect(rig.receiver.received).toHaveLength(1);
    const [request] = rig.receiver.received;
    if (!request) throw new Error("no request");
    const event = new Webhook(rig.secret).verify(request.body, headerObject(request.headers)) as Record<
      string,
      unknown
    >;
    expect(event.type).toBe("outboxd.ping");
    expect(event.id).toBe(request.headers.get("webhook-id"));
    expect(event.id).toMatch(UUID);
    expect(Object.keys(event)).toEqual([
      "id",
      "type",
      "timestamp",
      "aggregate",
      "sequence",
      "previousSequence",
      "data",
    ]);

    const [counts] = await sql<{ events: number; deliveries: number }>(
      rig.server,
      "SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM deliveries) AS deliveries",
    );
    expect(counts).toEqual({ events: 0, deliveries: 0 });
  });

  test("reports a failing receiver's status code, and a connection error as an error", async () => {
    rig.receiver.respond = () => new Response("boom", { status: 500 });
    const failing = expectStatus(
      await rig.server.request("POST", `/v1/endpoints/${rig.endpointId}/test`),
      200,
    );
    expect(failing).toMatchObject({ statusCode: 500, responsePrefix: "boom" });

    const closed = expectStatus(
      await rig.server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/nobody" }),
      201,
    );
    const refused = expectStatus(await rig.server.request("POST", `/v1/endpoints/${closed.id}/test`), 200);
    expect(refused.statusCode).toBeNull();
    expect(typeof refused.error).toBe("string");
    expect(refused.error.length).toBeGreaterThan(0);
  });

  test("an unknown endpoint is 404", async () => {
    const response = await rig.server.request("POST", "/v1/endpoints/ep_nope/test");
    expect(response.status).toBe(404);
  });
});
