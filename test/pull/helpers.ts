// Shared pieces of the pull suites: an outboxd with one pull endpoint and a consume token.

import { expectStatus } from "../dispatch/harness.ts";
import { apiClient, type Request } from "../helpers/api.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

export interface PullRig {
  server: TestServer;
  endpointId: string;
  /** Requests with a token holding only `consume`. */
  consumer: Request;
  consumeToken: string;
  poll(body?: Record<string, unknown>, endpointId?: string): Promise<PollAnswer>;
  ack(body: Record<string, unknown>, endpointId?: string): Promise<AckAnswer>;
  stop(): Promise<void>;
}

export interface Pulled {
  deliveryId: string;
  leaseToken: string;
  attempt: number;
  event: {
    id: string;
    type: string;
    timestamp: string;
    aggregate: string;
    sequence: number;
    previousSequence: number | null;
    data: unknown;
  };
}
export interface PollAnswer {
  data: Pulled[];
  leaseExpiresAt: string | null;
}
export interface AckAnswer {
  acked: number;
  nacked: number;
  stale: string[];
}

export async function createPullEndpoint(
  server: TestServer,
  body: Record<string, unknown> = {},
): Promise<string> {
  return expectStatus(await server.request("POST", "/v1/endpoints", { kind: "pull", ...body }), 201).id;
}

export async function startPullRig(env: Record<string, string> = {}): Promise<PullRig> {
  const server = await startServer(env);
  const endpointId = await createPullEndpoint(server);
  const created = expectStatus(
    await server.request("POST", "/v1/tokens", { name: "consumer", scopes: ["consume"] }),
    201,
  );
  const consumer = apiClient(server.url, created.token);
  return {
    server,
    endpointId,
    consumer,
    consumeToken: created.token,
    async poll(body = {}, id = endpointId) {
      return expectStatus(await consumer("POST", `/v1/endpoints/${id}/poll`, body), 200);
    },
    async ack(body, id = endpointId) {
      return expectStatus(await consumer("POST", `/v1/endpoints/${id}/ack`, body), 200);
    },
    stop: () => server.stop(),
  };
}
