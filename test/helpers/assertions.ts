// Assertions shared by the HTTP suites.
import { expect } from "bun:test";
import type { TestResponse, TestServer } from "./server.ts";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** RFC 3339 in UTC, as outboxd writes timestamps. */
export const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * The response is an RFC 9457 problem with this status; when `pointer` is given, its `errors`
 * name that JSON Pointer. Returns the body for further checks.
 */
export function expectProblem(
  response: TestResponse,
  status: number,
  pointer?: string,
  // biome-ignore lint/suspicious/noExplicitAny: problem bodies are read freely
): any {
  if (response.status !== status) {
    throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  }
  expect(response.headers.get("content-type")).toStartWith("application/problem+json");
  const body = response.body;
  expect(typeof body.type).toBe("string");
  expect(typeof body.title).toBe("string");
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe("string");
  if (pointer !== undefined) {
    expect(Array.isArray(body.errors)).toBe(true);
    const pointers = (body.errors as { pointer: string; detail: string }[]).map((e) => e.pointer);
    expect(pointers).toContain(pointer);
    for (const error of body.errors) expect(typeof error.detail).toBe("string");
  }
  return body;
}

/** Asserts a 2xx status, with the body in the failure message otherwise. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are read freely
export function expectStatus(response: TestResponse, status: number): any {
  if (response.status !== status) {
    throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/** Every event of an aggregate, in sequence order, following `next` cursors. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are read freely
export async function eventsOf(server: TestServer, aggregate: string): Promise<any[]> {
  const events = [];
  let after: string | null = null;
  do {
    const query = new URLSearchParams({ aggregate, limit: "500", ...(after ? { after } : {}) });
    const body = expectStatus(await server.request("GET", `/v1/events?${query}`), 200);
    events.push(...body.data);
    after = body.next;
  } while (after !== null);
  return events;
}

/** How many events and deliveries the API shows in total. */
export async function totals(server: TestServer): Promise<{ events: number; deliveries: number }> {
  const events = expectStatus(await server.request("GET", "/v1/events?limit=500"), 200);
  const deliveries = expectStatus(await server.request("GET", "/v1/deliveries?limit=500"), 200);
  return { events: events.data.length, deliveries: deliveries.data.length };
}

/** Creates an endpoint (admin) on a never-listening local port and returns its id. */
export async function createEndpoint(server: TestServer, eventTypes?: string[]): Promise<string> {
  const body = expectStatus(
    await server.request("POST", "/v1/endpoints", {
      url: `http://127.0.0.1:9/hook/${crypto.randomUUID()}`,
      ...(eventTypes ? { eventTypes } : {}),
    }),
    201,
  );
  expect(body.id).toStartWith("ep_");
  return body.id;
}
