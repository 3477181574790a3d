// The send worker (src/dispatch/send-worker.ts) makes the same exchange as the dispatcher's own
// thread (exchange.ts makeExchange): same answer, same prefix, same failures; and an exchange it
// holds when it stops is answered as a failure, never left waiting.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Exchange,
  makeExchange,
  RESPONSE_PREFIX_BYTES,
  useWebhookClient,
} from "../../src/dispatch/exchange.ts";
import { SendWorker, sendWorkerSupported } from "../../src/dispatch/send-worker.ts";
import { signatureHeader } from "../../src/dispatch/signer.ts";
import type { Logger } from "../../src/ops/log.ts";

const quiet: Logger = { log() {}, enabled: () => false };

let server: ReturnType<typeof Bun.serve>;
let hung: (() => void)[] = [];
const seen: { path: string; body: string; signature: string | null }[] = [];

beforeAll(() => {
  // The same client in both threads (`auto` would give the worker fetch: exchange.ts workerClient).
  useWebhookClient("native");
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      seen.push({ path, body: await request.text(), signature: request.headers.get("webhook-signature") });
      if (path === "/ok")
        return new Response("x".repeat(5000), { status: 200, headers: { "retry-after": "7" } });
      if (path === "/empty") return new Response(null, { status: 204 });
      if (path === "/moved") return new Response(null, { status: 302, headers: { location: "/elsewhere" } });
      if (path === "/hang")
        return new Promise<Response>((resolve) => hung.push(() => resolve(new Response("late"))));
      return new Response("no", { status: 404 });
    },
  });
});

afterAll(() => {
  useWebhookClient("auto");
  for (const release of hung) release();
  hung = [];
  server.stop(true);
});

function exchange(path: string, timeoutMs = 5_000): Exchange {
  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    headers: { "content-type": "application/json", "webhook-signature": "v1,abc" },
    body: `{"path":"${path}"}`,
    timeoutMs,
    pinned: false,
    serverName: undefined,
  };
}

describe.if(sendWorkerSupported())("send worker", () => {
  test("answers, prefixes, redirects and failures are the same as in the dispatcher's thread", async () => {
    const worker = new SendWorker(quiet);
    try {
      for (const path of ["/ok", "/empty", "/moved", "/missing"]) {
        const [here, there] = await Promise.all([
          makeExchange(exchange(path)),
          worker.exchange(exchange(path)),
        ]);
        expect(there).toEqual(here);
      }
      const ok = await worker.exchange(exchange("/ok"));
      expect(ok.statusCode).toBe(200);
      expect(ok.responsePrefix?.length).toBe(RESPONSE_PREFIX_BYTES);
      expect(ok.retryAfter).toBe("7");
      // The request arrived as asked: body and headers.
      expect(
        seen
          .filter((s) => s.path === "/ok")
          .every((s) => s.body === '{"path":"/ok"}' && s.signature === "v1,abc"),
      ).toBe(true);
      // Nothing listens on port 9 here: refused, with the same description either way.
      const refused: Exchange = { ...exchange("/"), url: "http://127.0.0.1:9/" };
      const [here, there] = await Promise.all([makeExchange(refused), worker.exchange(refused)]);
      expect(there.statusCode).toBeNull();
      expect(there.failure?.code).toBe(here.failure?.code as string);
      expect(there.failure?.message).toBe(here.failure?.message as string);
      // A timeout is reported as one (sender.ts describes it as "timeout: …").
      const slow = await worker.exchange(exchange("/hang", 100));
      expect(slow.failure?.name).toBe("TimeoutError");
    } finally {
      worker.stop();
    }
  });

  test("an exchange to sign is signed on the worker as the dispatcher's thread signs it", async () => {
    const worker = new SendWorker(quiet);
    try {
      const secrets = [
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "whsec_c2Vjb25kIHNlY3JldCBmb3IgdGhlIHRlc3Q=",
      ];
      const { headers, ...rest } = exchange("/ok");
      const { "webhook-signature": _, ...unsigned } = headers;
      const toSign: Exchange = {
        ...rest,
        headers: unsigned,
        sign: { secrets, id: "evt_sign", timestamp: 1_700_000_000 },
      };
      const before = seen.length;
      expect((await worker.exchange(toSign)).statusCode).toBe(200);
      expect(seen.slice(before).map((s) => s.signature)).toEqual([
        signatureHeader(secrets, "evt_sign", 1_700_000_000, toSign.body),
      ]);
    } finally {
      worker.stop();
    }
  });

  test("many exchanges at once each get their own answer", async () => {
    const worker = new SendWorker(quiet);
    try {
      const paths = Array.from({ length: 200 }, (_, i) =>
        i % 3 === 0 ? "/moved" : i % 3 === 1 ? "/empty" : "/missing",
      );
      const results = await Promise.all(paths.map((p) => worker.exchange(exchange(p))));
      expect(results.map((r) => r.statusCode)).toEqual(
        paths.map((p) => (p === "/moved" ? 302 : p === "/empty" ? 204 : 404)),
      );
      expect(worker.pending).toBe(0);
    } finally {
      worker.stop();
    }
  });

  test("an exchange waiting when the worker stops is answered as a failure; the next one starts a new worker", async () => {
    const worker = new SendWorker(quiet);
    const waiting = worker.exchange(exchange("/hang"));
    await waitUntil(() => hung.length > 0);
    worker.stop();
    const result = await waiting;
    expect(result.statusCode).toBeNull();
    expect(result.failure?.message).toContain("stopped");
    const again = await worker.exchange(exchange("/empty"));
    expect(again.statusCode).toBe(204);
    worker.stop();
  });
});

async function waitUntil(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
