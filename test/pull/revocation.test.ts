// Revocation reaches open streams (DESIGN §12): an SSE stream whose token is revoked, or whose
// endpoint is deleted or disabled, closes within 1 s and leases nothing after; a long poll whose
// token is revoked while it waits leases nothing either. A real server, real streams over HTTP,
// and a revocation written behind the server's back (as another process or the CLI would).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitEvents, exec, expectStatus, sql, waitUntil } from "../dispatch/harness.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { createPullEndpoint } from "./helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.stop();
});

async function consumeToken(name: string): Promise<{ id: string; token: string }> {
  return expectStatus(await server.request("POST", "/v1/tokens", { name, scopes: ["consume"] }), 201);
}

/** A stream read with fetch: the delivery ids it got, and when its body ended (null while open). */
async function openStream(endpointId: string, token: string) {
  const state = { deliveries: [] as string[], endedAt: null as number | null };
  const response = await fetch(`${server.url}/v1/endpoints/${endpointId}/stream?max=10`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as ReadableStream<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (const line of buffer.split("\n").slice(0, -1)) {
          if (line.startsWith("id: ")) state.deliveries.push(line.slice(4));
        }
        buffer = buffer.slice(buffer.lastIndexOf("\n") + 1);
      }
    } catch {
      // a cut connection ends the stream too
    }
    state.endedAt = Date.now();
  })();
  await waitUntil("the stream is open", async () => server.outboxd.pull.hub.waiting().includes(endpointId));
  return { state, reading };
}

async function leasedOf(endpointId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    server,
    "SELECT count(*) AS n FROM deliveries WHERE endpoint_id = :endpointId AND lease_owner IS NOT NULL",
    { endpointId },
  );
  return row?.n ?? 0;
}

/** Opens a stream, checks it works, then `cut`s it; it must end within 1 s and lease nothing after. */
async function closesWithin1s(cut: (ids: { endpointId: string; tokenId: string }) => Promise<void>) {
  const endpointId = await createPullEndpoint(server);
  const holder = await consumeToken(`holder-${endpointId}`);
  const { state, reading } = await openStream(endpointId, holder.token);
  await commitEvents(server, [{ aggregate: "r/1", endpoints: [endpointId] }]);
  await waitUntil("the first delivery on the stream", async () => state.deliveries.length === 1);

  const cutAt = Date.now();
  await cut({ endpointId, tokenId: holder.id });
  await waitUntil("the stream to end", async () => state.endedAt !== null, 5_000);
  await reading;
  const leasedBefore = await leasedOf(endpointId);
  await commitEvents(server, [{ aggregate: "r/2", endpoints: [endpointId] }]).catch(() => []);
  return { closedInMs: (state.endedAt as number) - cutAt, state, endpointId, leasedBefore };
}

describe("an open stream ends within 1 s and leases nothing after", () => {
  test("when its token is revoked (DELETE /v1/tokens/{id})", async () => {
    const { closedInMs, state, endpointId, leasedBefore } = await closesWithin1s(async ({ tokenId }) => {
      expectStatus(await server.request("DELETE", `/v1/tokens/${tokenId}`), 200);
    });
    expect(closedInMs).toBeLessThan(1000);
    expect(state.deliveries).toHaveLength(1);
    // The event committed after the revocation is never leased (the sweep would otherwise see it).
    await server.outboxd.pull.sweep();
    expect(await leasedOf(endpointId)).toBe(leasedBefore);
  });

  test("when its token is revoked behind the server's back (another process, the CLI)", async () => {
    const { closedInMs } = await closesWithin1s(async ({ tokenId }) => {
      await exec(server, "UPDATE tokens SET revoked_at = :now WHERE id = :tokenId", {
        tokenId,
        now: Date.now(),
      });
    });
    expect(closedInMs).toBeLessThan(1000);
  });

  test("when its endpoint is deleted", async () => {
    const { closedInMs } = await closesWithin1s(async ({ endpointId }) => {
      expectStatus(await server.request("DELETE", `/v1/endpoints/${endpointId}`), 200);
    });
    expect(closedInMs).toBeLessThan(1000);
  });

  test("when its endpoint is disabled; enabling it again does not bring the stream back", async () => {
    const { closedInMs, endpointId, leasedBefore } = await closesWithin1s(async ({ endpointId }) => {
      expectStatus(await server.request("PATCH", `/v1/endpoints/${endpointId}`, { disabled: true }), 200);
    });
    expect(closedInMs).toBeLessThan(1000);
    expectStatus(await server.request("PATCH", `/v1/endpoints/${endpointId}`, { disabled: false }), 200);
    await server.outboxd.pull.sweep();
    expect(await leasedOf(endpointId)).toBe(leasedBefore);
  });
});

test("a long poll whose token is revoked while it waits leases nothing (401)", async () => {
  const endpointId = await createPullEndpoint(server);
  const holder = await consumeToken("poller");
  const polling = fetch(`${server.url}/v1/endpoints/${endpointId}/poll`, {
    method: "POST",
    headers: { authorization: `Bearer ${holder.token}`, "content-type": "application/json" },
    body: JSON.stringify({ wait: "10s" }),
  });
  await waitUntil("the poll to wait", async () => server.outboxd.pull.hub.waiting().includes(endpointId));
  await exec(server, "UPDATE tokens SET revoked_at = :now WHERE id = :id", {
    id: holder.id,
    now: Date.now(),
  });
  await commitEvents(server, [{ aggregate: "p/1", endpoints: [endpointId] }]);
  const answer = await polling;
  expect(answer.status).toBe(401);
  expect(await leasedOf(endpointId)).toBe(0);
});
