// The event stream (DESIGN §12), read by the `eventsource` npm client with the token in the
// Authorization header through its custom fetch: one message per leased delivery, at most `max`
// unacknowledged at once, more as acks free room, order per aggregate kept.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventSource } from "eventsource";
import type { PullService, Pulled as ServicePulled } from "../../src/pull/service.ts";
import { commitEvents, expectStatus, sql, waitUntil } from "../dispatch/harness.ts";
import { createPullEndpoint, type Pulled, type PullRig, startPullRig } from "./helpers.ts";

/** The pull service's stream (what the route runs), read in the test: what it sent, how many keepalives. */
function serviceStream(pull: PullService, endpointId: string, options: Parameters<PullService["stream"]>[1]) {
  const closed = new AbortController();
  const state = {
    sent: [] as ServicePulled[],
    keepalives: 0,
    async close() {
      closed.abort();
      await streaming;
    },
  };
  const streaming = pull.stream(endpointId, options, {
    signal: closed.signal,
    deliver: async (batch) => {
      state.sent.push(...batch);
    },
    keepalive: async () => {
      state.keepalives += 1;
    },
  });
  return state;
}

interface Message {
  id: string;
  pulled: Pulled;
}

/** An EventSource on the endpoint's stream, collecting `delivery` messages. */
function open(rig: PullRig, endpointId: string, query: string) {
  const messages: Message[] = [];
  const source = new EventSource(`${rig.server.url}/v1/endpoints/${endpointId}/stream?${query}`, {
    fetch: (url, init) =>
      fetch(url, { ...init, headers: { ...init.headers, authorization: `Bearer ${rig.consumeToken}` } }),
  });
  source.addEventListener("delivery", (message) => {
    messages.push({ id: message.lastEventId, pulled: JSON.parse(message.data) as Pulled });
  });
  return { source, messages };
}

/**
 * The stream read with plain fetch (to send headers an EventSource would not): every SSE block as
 * it arrives, comments included, and the `delivery` messages parsed.
 */
function openRaw(rig: PullRig, endpointId: string, query: string, headers: Record<string, string> = {}) {
  const blocks: string[] = [];
  const messages: Message[] = [];
  const closed = new AbortController();
  const done = (async () => {
    const response = await fetch(`${rig.server.url}/v1/endpoints/${endpointId}/stream?${query}`, {
      headers: { authorization: `Bearer ${rig.consumeToken}`, ...headers },
      signal: closed.signal,
    });
    expect(response.status).toBe(200);
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as ReadableStream<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          blocks.push(block);
          const lines = block.split("\n");
          if (lines[0] !== "event: delivery") continue;
          const id = (lines.find((l) => l.startsWith("id: ")) ?? "").slice(4);
          const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
          messages.push({ id, pulled: JSON.parse(data.join("\n")) as Pulled });
        }
      }
    } catch (error) {
      if (!closed.signal.aborted) throw error;
    }
  })();
  return {
    blocks,
    messages,
    async close() {
      closed.abort();
      await done.catch(() => {});
    },
  };
}

/** How many deliveries of the endpoint are leased now (in the database). */
async function leasedNow(rig: PullRig, endpointId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    rig.server,
    "SELECT count(*) AS n FROM deliveries WHERE endpoint_id = :endpointId AND status = 'pending' AND lease_expires_at > :now",
    { endpointId, now: Date.now() },
  );
  return row?.n ?? 0;
}

describe("the event stream", () => {
  let rig: PullRig;
  beforeAll(async () => {
    rig = await startPullRig({ OUTBOXD_RETRY_BASE: "20ms", OUTBOXD_RETRY_CAP: "100ms" });
  });
  afterAll(async () => {
    await rig.stop();
  });

  test("eventsource receives each delivery as `event: delivery` with id = deliveryId, at most max unacked", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    const { source, messages } = open(rig, endpointId, "max=2&lease=30s");
    try {
      await waitUntil("the stream is open", async () =>
        rig.server.outboxd.pull.hub.waiting().includes(endpointId),
      );
      // Three aggregates, two events each; one payload committed with line breaks in it.
      const pretty = await rig.server.request(
        "POST",
        "/v1/commits",
        `{"events": [{"type": "s.pretty", "aggregate": "s/pretty", "endpoints": ["${endpointId}"],\n  "payload": {\n    "aggregate": "s/pretty"\n  }}]}`,
      );
      expect(pretty.status).toBe(201);
      const committed = await commitEvents(
        rig.server,
        ["s/a", "s/b", "s/c", "s/a", "s/b", "s/c"].map((aggregate) => ({
          aggregate,
          payload: { aggregate },
          endpoints: [endpointId],
        })),
      );
      const acked: Message[] = [];
      while (acked.length < committed.length + 1) {
        await waitUntil("a message to answer", async () => messages.length > acked.length);
        expect(await leasedNow(rig, endpointId)).toBeLessThanOrEqual(2);
        const message = messages[acked.length] as Message;
        expect(message.id).toBe(message.pulled.deliveryId);
        expect(message.pulled.leaseToken).toMatch(/^lt_/);
        expect(message.pulled.event.data).toEqual({ aggregate: message.pulled.event.aggregate });
        // Never more than max sent and unanswered.
        expect(messages.length - acked.length).toBeLessThanOrEqual(2);
        const answer = await rig.ack(
          { acks: [{ deliveryId: message.pulled.deliveryId, leaseToken: message.pulled.leaseToken }] },
          endpointId,
        );
        expect(answer).toEqual({ acked: 1, nacked: 0, stale: [] });
        acked.push(message);
      }
      expect(messages).toHaveLength(committed.length + 1);
      for (const aggregate of ["s/a", "s/b", "s/c"]) {
        expect(
          messages.filter((m) => m.pulled.event.aggregate === aggregate).map((m) => m.pulled.event.sequence),
        ).toEqual([1, 2]);
      }
    } finally {
      source.close();
    }
    // The client went away: the server's stream ends and no longer waits on the endpoint.
    await waitUntil(
      "the stream is closed",
      async () => !rig.server.outboxd.pull.hub.waiting().includes(endpointId),
    );
  });

  test("an idle stream answers at once: status and headers go out before any delivery", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    const closed = new AbortController();
    const response = await fetch(`${rig.server.url}/v1/endpoints/${endpointId}/stream`, {
      headers: { authorization: `Bearer ${rig.consumeToken}` },
      signal: closed.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const first = await (response.body as ReadableStream<Uint8Array>).getReader().read();
    expect(new TextDecoder().decode(first.value)).toBe(": connected\n\n");
    closed.abort();
  });

  test("a nacked delivery comes again on the same stream; an unanswered one after its lease runs out", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    const { source, messages } = open(rig, endpointId, "max=5&lease=1s");
    try {
      const [event] = await commitEvents(rig.server, [{ aggregate: "again/1", endpoints: [endpointId] }]);
      await waitUntil("the first message", async () => messages.length >= 1);
      const first = (messages[0] as Message).pulled;
      expect(first).toMatchObject({ deliveryId: event?.deliveries[0]?.id, attempt: 1 });
      await rig.ack(
        { nacks: [{ deliveryId: first.deliveryId, leaseToken: first.leaseToken, retryAfter: "0s" }] },
        endpointId,
      );
      await waitUntil("the nacked delivery again", async () => messages.length >= 2);
      const second = (messages[1] as Message).pulled;
      expect(second).toMatchObject({ deliveryId: first.deliveryId, attempt: 2 });
      // Not answered: its 1 s lease runs out, the sweep makes it a failed attempt, and it comes again.
      await waitUntil("after the lapsed lease", async () => messages.length >= 3, 20_000);
      const third = (messages[2] as Message).pulled;
      expect(third).toMatchObject({ deliveryId: first.deliveryId, attempt: 3 });
      await rig.ack({ acks: [{ deliveryId: third.deliveryId, leaseToken: third.leaseToken }] }, endpointId);
      const attempts = expectStatus(
        await rig.server.request("GET", `/v1/deliveries/${first.deliveryId}/attempts`),
        200,
      );
      expect(attempts.map((a: { error: string | null }) => a.error)).toEqual([
        "nacked by a consumer (retryAfter 0 ms)",
        "the lease ran out without an ack",
        null,
      ]);
    } finally {
      source.close();
    }
  });

  test("Last-Event-ID is ignored: a reconnecting client gets what is claimable, nothing skipped or replayed", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    const [first, second] = await commitEvents(rig.server, [
      { aggregate: "resume/a", endpoints: [endpointId] },
      { aggregate: "resume/b", endpoints: [endpointId] },
    ]);
    const firstId = first?.deliveries[0]?.id as string;
    const secondId = second?.deliveries[0]?.id as string;
    // The first is answered before the client reconnects.
    const before = await rig.poll({ max: 1 }, endpointId);
    expect(before.data.map((p) => p.deliveryId)).toEqual([firstId]);
    const [leased] = before.data as [Pulled];
    await rig.ack({ acks: [{ deliveryId: leased.deliveryId, leaseToken: leased.leaseToken }] }, endpointId);
    // A client that claims to have seen the second (as an EventSource reconnecting would say) still
    // gets it: the server neither resumes after that id nor sends the acked first again.
    const stream = openRaw(rig, endpointId, "max=10", { "last-event-id": secondId });
    try {
      await waitUntil("the second on the stream", async () => stream.messages.length >= 1);
      expect(stream.messages.map((m) => m.id)).toEqual([secondId]);
      const [third] = await commitEvents(rig.server, [{ aggregate: "resume/a", endpoints: [endpointId] }]);
      await waitUntil("the next commit on the stream", async () => stream.messages.length >= 2);
      expect(stream.messages.map((m) => m.id)).toEqual([secondId, third?.deliveries[0]?.id as string]);
    } finally {
      await stream.close();
    }
  });

  test("an idle stream sends `: keepalive` comments, and they do not renew the leases it holds", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    const [event] = await commitEvents(rig.server, [
      { aggregate: "keep/1", endpoints: [endpointId] },
      { aggregate: "keep/2", endpoints: [endpointId] },
    ]);
    const deliveryId = event?.deliveries[0]?.id as string;
    // The service behind the route, with a short keepalive interval (the route's is 15 s).
    const stream = serviceStream(rig.server.outboxd.pull, endpointId, {
      max: 1,
      leaseMs: 60_000,
      keepaliveMs: 30,
    });
    const { sent } = stream;
    try {
      await waitUntil("the delivery", async () => sent.length === 1);
      const [row] = await sql<{ leaseExpiresAt: number; leaseOwner: string }>(
        rig.server,
        "SELECT lease_expires_at AS leaseExpiresAt, lease_owner AS leaseOwner FROM deliveries WHERE id = :id",
        { id: deliveryId },
      );
      await waitUntil("three keepalives", async () => stream.keepalives >= 3);
      // The window is full (max 1, unanswered): the second is not sent, and the lease is as it was.
      expect(sent.map((p) => p.deliveryId)).toEqual([deliveryId]);
      expect(
        await sql(
          rig.server,
          "SELECT lease_expires_at AS leaseExpiresAt, lease_owner AS leaseOwner FROM deliveries WHERE id = :id",
          { id: deliveryId },
        ),
      ).toEqual([row]);
      expect(row?.leaseOwner).toBe(sent[0]?.leaseToken as string);
    } finally {
      await stream.close();
    }
  });

  test("an idle stream's keepalives lease nothing: only a wake-up of its endpoint makes it look again", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    const pull = rig.server.outboxd.pull;
    // Count the leases the stream asks for (the service's own method, as the stream calls it).
    let leases = 0;
    const lease = pull.lease.bind(pull);
    pull.lease = (id, limit, leaseMs, check) => {
      if (id === endpointId) leases += 1;
      return lease(id, limit, leaseMs, check);
    };
    const stream = serviceStream(pull, endpointId, { max: 10, leaseMs: 60_000, keepaliveMs: 20 });
    const { sent } = stream;
    try {
      await waitUntil("five keepalives", async () => stream.keepalives >= 5);
      // The one lease at the start; none per keepalive (nothing happened to the endpoint).
      expect(leases).toBe(1);
      const [event] = await commitEvents(rig.server, [{ aggregate: "idle/1", endpoints: [endpointId] }]);
      await waitUntil("the delivery", async () => sent.length === 1);
      expect(sent[0]?.deliveryId).toBe(event?.deliveries[0]?.id as string);
      expect(leases).toBe(2);
    } finally {
      await stream.close();
      pull.lease = lease;
    }
  });
});
