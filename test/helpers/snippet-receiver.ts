// A receiver built the way docs/receivers.md tells users to build one: it verifies each
// webhook with the receiver snippet and applies it at most once with applyOnce. It records
// what it applied, what it rejected as duplicate or stale, and can be told to fail.
import { randomBytes } from "node:crypto";
import { applyOnce, memoryStore, type OutboxEvent, verifyWebhook } from "../../src/receiver/verify.ts";

export interface Applied {
  id: string;
  aggregate: string;
  sequence: number;
  type: string;
}

export interface SnippetReceiver {
  url: string;
  secret: string;
  /** Events whose effect happened, in the order it happened. */
  applied: Applied[];
  /** When each event's effect happened (ms epoch). */
  appliedAt: Map<string, number>;
  duplicates: Applied[];
  stale: Applied[];
  /** Requests answered (any status), including failures injected by `fail`. */
  requests: number;
  rejected: number;
  /** Return a status (e.g. 500) to fail this request before applying; undefined to accept. */
  fail: (event: OutboxEvent, index: number) => number | undefined;
  /** Milliseconds to stall before handling this request (0 = none): a slow or hung receiver. */
  stall: (index: number) => number;
  stop(): Promise<void>;
}

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export function startSnippetReceiver(secret = newSecret()): SnippetReceiver {
  const store = memoryStore();
  const receiver: SnippetReceiver = {
    url: "",
    secret,
    applied: [],
    appliedAt: new Map(),
    duplicates: [],
    stale: [],
    requests: 0,
    rejected: 0,
    fail: () => undefined,
    stall: () => 0,
    stop: async () => {},
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const index = receiver.requests++;
      const body = await request.text();
      const stall = receiver.stall(index);
      if (stall > 0) await Bun.sleep(stall);
      let event: OutboxEvent;
      try {
        event = await verifyWebhook({ headers: request.headers, body }, receiver.secret);
      } catch {
        receiver.rejected++;
        return new Response("bad signature", { status: 400 });
      }
      const status = receiver.fail(event, index);
      if (status !== undefined) return new Response("injected failure", { status });
      const entry = { id: event.id, aggregate: event.aggregate, sequence: event.sequence, type: event.type };
      const { result } = await applyOnce(event, store, () => {
        receiver.applied.push(entry);
        receiver.appliedAt.set(entry.id, Date.now());
      });
      if (result === "duplicate") receiver.duplicates.push(entry);
      if (result === "stale") receiver.stale.push(entry);
      return Response.json({ result });
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}/webhooks`;
  receiver.stop = async () => {
    await server.stop(true);
  };
  return receiver;
}
