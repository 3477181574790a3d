// The native webhook client (src/dispatch/http1-client.ts) against real servers on 127.0.0.1: a
// raw one that shows the bytes on the wire and answers with any bytes (http1-server.ts), and a
// TLS one with a self-signed certificate. Its answers are the fetch path's (exchange.ts run with
// OUTBOXD_WEBHOOK_CLIENT=fetch on the same answers); what only it does (connections kept, closed,
// retried, bounded; timeouts; the wire) is checked on the connections the server saw.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import {
  type Exchange,
  makeExchange,
  RESPONSE_PREFIX_BYTES,
  useWebhookClient,
} from "../../src/dispatch/exchange.ts";
import { Http1Client, type Http1Post } from "../../src/dispatch/http1-client.ts";
import { SendWorker, sendWorkerSupported } from "../../src/dispatch/send-worker.ts";
import { sendWebhook, type WebhookMessage } from "../../src/dispatch/sender.ts";
import type { Logger } from "../../src/ops/log.ts";
import { PINNED_TEST_CERT, PINNED_TEST_KEY } from "../security/fixtures/tls.ts";
import { answer, type RawServer, rawServer, waitUntil, writeInPieces } from "./http1-server.ts";

const servers: RawServer[] = [];
const clients: Http1Client[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.closeIdle();
  for (const server of servers.splice(0)) server.stop();
  useWebhookClient("auto");
});

function serve(respond: RawServer["respond"], tls?: { cert: string; key: string }): RawServer {
  const server = rawServer(respond, tls);
  servers.push(server);
  return server;
}

function client(options: { idleMs?: number; maxIdle?: number; ca?: string } = {}): Http1Client {
  const c = new Http1Client({ prefixBytes: RESPONSE_PREFIX_BYTES, ...options });
  clients.push(c);
  return c;
}

function post(url: string, extra: Partial<Http1Post> = {}): Http1Post {
  return {
    url,
    headers: { "content-type": "application/json", "webhook-id": "msg_1" },
    body: '{"hello":"world"}',
    timeoutMs: 5_000,
    serverName: undefined,
    ...extra,
  };
}

const quiet: Logger = { log() {}, enabled: () => false };

/** A webhook as the sender gets it. */
const MESSAGE: WebhookMessage = {
  id: "evt_1",
  type: "t",
  aggregate: "a",
  sequence: 1,
  payload: "{}",
  occurredAt: 0,
  attempt: 1,
  traceparent: null,
};

describe("answers: the same as the fetch path's", () => {
  const utf8 = `x${"é".repeat(700)}`;
  const answers: Record<string, string> = {
    "/ok": answer(200, '{"result":"applied"}', { "content-type": "application/json" }),
    "/long": answer(200, "y".repeat(5000), { "Retry-After": "7" }),
    "/utf8": answer(200, utf8),
    "/chunked":
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwebh\r\n3;x=y\r\nook\r\n0\r\nx-t: 1\r\n\r\n",
    "/interim": `HTTP/1.1 100 Continue\r\n\r\n${answer(201, "made")}`,
    "/empty": "HTTP/1.1 204 No Content\r\n\r\n",
    "/zero": answer(200),
    "/moved": answer(302, "", { location: "/elsewhere" }),
    "/busy": answer(503, "later", { "retry-after": "120", "Retry-After": "Wed, 21 Oct 2037 07:28:00 GMT" }),
    "/close": "HTTP/1.1 500 Oops\r\ncontent-type: text/plain\r\n\r\nuntil the end",
  };
  const server = rawServer((request, connection) => {
    const path = /^POST (\S+) /.exec(request.head)?.[1] as string;
    const text = answers[path] ?? answer(404);
    if (path === "/close") connection.socket.end(text);
    else void writeInPieces(connection.socket, text, path === "/long" ? 700 : 7);
  });
  afterAll(() => server.stop());

  for (const path of Object.keys(answers))
    test(path, async () => {
      const exchange = (): Exchange => ({
        url: `${server.url}${path}?q=1`,
        headers: { "content-type": "application/json" },
        body: "{}",
        timeoutMs: 5_000,
        pinned: false,
        serverName: undefined,
      });
      useWebhookClient("fetch");
      const viaFetch = await makeExchange(exchange());
      useWebhookClient("native");
      const native = await makeExchange(exchange());
      expect(native).toEqual(viaFetch);
      expect(native.failure).toBeNull();
    });

  test("a prefix is RESPONSE_PREFIX_BYTES of the body, decoded (a character cut at the end as fetch cuts it)", async () => {
    const result = await client().post(post(`${server.url}/utf8`));
    expect(result.responsePrefix).toBe(
      new TextDecoder().decode(Buffer.from(utf8).subarray(0, RESPONSE_PREFIX_BYTES)),
    );
    expect(result.responsePrefix?.endsWith("\uFFFD")).toBe(true);
  });
});

describe("the request on the wire", () => {
  test("POST, path and query, Host, the headers as given, content-length in UTF-8 bytes, the body", async () => {
    const server = serve((_, c) => c.socket.write(answer(200)));
    const body = '{"note":"café €"}';
    const result = await client().post(
      post(`${server.url}/hooks/in?token=abc#frag`, {
        headers: { "content-type": "application/json", "webhook-id": "msg_1", "outbox-sequence": "7" },
        body,
      }),
    );
    expect(result.statusCode).toBe(200);
    const [request] = server.requests;
    expect(request?.head).toBe(
      [
        "POST /hooks/in?token=abc HTTP/1.1",
        `host: 127.0.0.1:${server.port}`,
        "content-type: application/json",
        "webhook-id: msg_1",
        "outbox-sequence: 7",
        `content-length: ${Buffer.byteLength(body)}`,
      ].join("\r\n"),
    );
    expect(request?.body.toString()).toBe(body);
  });

  test("a body larger than the socket takes at once is written in full (the rest at each drain)", async () => {
    const server = serve((request, c) => c.socket.write(answer(200, String(request.body.length))));
    const body = JSON.stringify({ data: "é".repeat(3_000_000) });
    const result = await client().post(post(`${server.url}/`, { body, timeoutMs: 20_000 }));
    expect(result.responsePrefix).toBe(String(Buffer.byteLength(body)));
    expect(server.requests[0]?.body.toString()).toBe(body);
  });

  test("a pinned request keeps the endpoint's host in Host", async () => {
    const server = serve((_, c) => c.socket.write(answer(200)));
    await client().post(post(`${server.url}/`, { headers: { host: "hooks.example.com:8443" } }));
    expect(server.requests[0]?.head).toContain("\r\nhost: hooks.example.com:8443\r\n");
    expect(server.requests[0]?.head.match(/\r\nhost:/gi)?.length).toBe(1);
  });

  test("a CR, LF or NUL in a header name or value fails the exchange; nothing is sent", async () => {
    const server = serve((_, c) => c.socket.write(answer(200)));
    const http = client();
    const cases: Record<string, string>[] = [
      { "x-a": "1\r\nx-injected: 1" },
      { "x-a": "1\nx" },
      { "x-a": "1\0" },
      { "x-a\r\nx-injected": "1" },
      { "x a": "1" },
      { "": "1" },
    ];
    for (const headers of cases) {
      const result = await http.post(post(`${server.url}/`, { headers }));
      expect(result.statusCode).toBeNull();
      expect(result.failure?.name).toBe("TypeError");
      expect(result.failure?.message).not.toContain("injected");
    }
    expect(server.connections.length).toBe(0);
    // And through the sender, whose traceparent comes from stored data.
    const message: WebhookMessage = { ...MESSAGE, traceparent: "00-abc\r\nx-injected: 1" };
    const outcome = await sendWebhook(message, {
      url: `${server.url}/`,
      secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
      timeoutMs: 2_000,
      allowPrivate: true,
      now: Date.now(),
    });
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error).toContain("traceparent");
    expect(server.connections.length).toBe(0);
  });

  test("a 3xx is the answer: its Location is never requested", async () => {
    const server = serve((_, c) => c.socket.write(answer(307, "", { location: "/elsewhere" })));
    const result = await client().post(post(`${server.url}/here`));
    expect(result.statusCode).toBe(307);
    await Bun.sleep(0);
    expect(server.requests.map((r) => r.head.split(" ")[1])).toEqual(["/here"]);
  });
});

describe("connections", () => {
  test("kept alive: exchanges one after the other share one connection", async () => {
    const server = serve((_, c) => c.socket.write(answer(200, "ok")));
    const http = client();
    for (let i = 0; i < 3; i++) expect((await http.post(post(`${server.url}/`))).statusCode).toBe(200);
    expect(server.requests.map((r) => [r.connection, r.index])).toEqual([
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(http.idleConnections).toBe(1);
  });

  test("connection: close, HTTP/1.0 and close-delimited bodies are not kept", async () => {
    const answers = [
      answer(200, "", { connection: "close" }),
      "HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n",
      "HTTP/1.1 200 OK\r\n\r\nbody until close",
    ];
    const server = serve((request, c) => {
      const text = answers[request.connection - 1] as string;
      if (request.connection === 3) c.socket.end(text);
      else c.socket.write(text);
    });
    const http = client();
    for (let i = 0; i < 3; i++) expect((await http.post(post(`${server.url}/`))).statusCode).toBe(200);
    expect(server.requests.map((r) => r.connection)).toEqual([1, 2, 3]);
    await waitUntil(() => http.openConnections === 0, "the connections closed");
  });

  test("extra bytes after an answer: that connection is not used again", async () => {
    const server = serve((_, c) => c.socket.write(`${answer(200)}HTTP/1.1 200 OK\r\n\r\n`));
    const http = client();
    await http.post(post(`${server.url}/`));
    await http.post(post(`${server.url}/`));
    expect(server.requests.map((r) => r.connection)).toEqual([1, 2]);
  });

  test("a short rest of a body after the prefix is read, and the connection kept", async () => {
    const server = serve((_, c) => void writeInPieces(c.socket, answer(200, "z".repeat(20_000)), 4096));
    const http = client();
    const first = await http.post(post(`${server.url}/`));
    expect(first.responsePrefix).toBe("z".repeat(RESPONSE_PREFIX_BYTES));
    await waitUntil(() => http.idleConnections === 1, "the connection back in the pool");
    await http.post(post(`${server.url}/`));
    expect(server.requests.map((r) => r.connection)).toEqual([1, 1]);
  });

  test("a long or endless body after the prefix is not read: its connection is closed", async () => {
    const server = serve((request, c) => {
      if (request.connection === 1)
        c.socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 10000000\r\n\r\n${"a".repeat(2000)}`);
      else {
        // Chunks without end, written as long as the connection takes them.
        c.socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
        const more = () => {
          if (c.closed) return;
          c.socket.write(`800\r\n${"b".repeat(2048)}\r\n`);
          setTimeout(more, 1);
        };
        more();
      }
    });
    const http = client();
    for (const letter of ["a", "b"]) {
      const result = await http.post(post(`${server.url}/`));
      expect(result.responsePrefix).toBe(letter.repeat(RESPONSE_PREFIX_BYTES));
    }
    await waitUntil(() => server.connections.every((c) => c.closed), "the server saw both closed", 3_000);
    expect(http.openConnections).toBe(0);
  });

  test("idle connections are closed after idleMs by one sweep", async () => {
    const server = serve((_, c) => c.socket.write(answer(200)));
    const http = client({ idleMs: 100 });
    await Promise.all([1, 2, 3].map(() => http.post(post(`${server.url}/`))));
    expect(http.idleConnections).toBe(3);
    await waitUntil(() => server.connections.every((c) => c.closed), "the idle connections closed");
    expect(http.openConnections).toBe(0);
    expect(http.idleConnections).toBe(0);
  });

  test("an idle connection does not keep the process alive", async () => {
    const server = serve((_, c) => c.socket.write(answer(200)));
    // A process that makes one exchange and has nothing left to do exits, its connection idle
    // (kept for a minute here), without waiting for the sweep.
    const script = `
      const { Http1Client } = await import(${JSON.stringify(new URL("../../src/dispatch/http1-client.ts", import.meta.url).pathname)});
      const http = new Http1Client({ prefixBytes: 1024, idleMs: 60_000 });
      const answer = await http.post({ url: "${server.url}/", headers: {}, body: "{}", timeoutMs: 5000, serverName: undefined });
      console.log(answer.statusCode, http.idleConnections);`;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
    const exited = await Promise.race([child.exited, Bun.sleep(20_000).then(() => "still running")]);
    if (exited === "still running") child.kill();
    expect(exited).toBe(0);
    expect((await new Response(child.stdout).text()).trim()).toBe("200 1");
  });

  test("at most maxIdle connections are kept", async () => {
    const server = serve((_, c) => setTimeout(() => c.socket.write(answer(200)), 20));
    const http = client({ maxIdle: 2 });
    await Promise.all([1, 2, 3, 4, 5].map(() => http.post(post(`${server.url}/`))));
    expect(server.connections.length).toBe(5);
    expect(http.idleConnections).toBe(2);
    await waitUntil(() => server.connections.filter((c) => c.closed).length === 3, "three closed");
    expect(http.openConnections).toBe(2);
  });

  test("a pooled connection the server closed is dropped, and the next send opens another", async () => {
    const server = serve((_, c) => c.socket.end(answer(200)));
    const http = client();
    // The answer keeps the connection (no `connection: close`), then the server closes it.
    expect((await http.post(post(`${server.url}/`))).statusCode).toBe(200);
    await waitUntil(() => http.openConnections === 0, "the client saw the close");
    expect((await http.post(post(`${server.url}/`))).statusCode).toBe(200);
    expect(server.requests.map((r) => r.connection)).toEqual([1, 2]);
  });

  test("a reused connection closed before any byte of the answer: sent once more on a new one", async () => {
    // The second request on a connection is dropped unanswered (an idle timeout crossing it).
    const server = serve((request, c) => {
      if (request.index === 1) c.socket.terminate();
      else c.socket.write(answer(200, `conn ${request.connection}`));
    });
    const http = client();
    expect((await http.post(post(`${server.url}/`))).responsePrefix).toBe("conn 1");
    const again = await http.post(post(`${server.url}/`));
    expect(again.failure).toBeNull();
    expect(again.responsePrefix).toBe("conn 2");
    expect(server.requests.map((r) => [r.connection, r.index])).toEqual([
      [1, 0],
      [1, 1],
      [2, 0],
    ]);
  });

  test("a new connection closed before an answer, or any connection mid-answer: a failure, not retried", async () => {
    const fresh = serve((_, c) => c.socket.terminate());
    const first = await client().post(post(`${fresh.url}/`));
    expect(first.statusCode).toBeNull();
    expect(first.failure?.code).toBe("ECONNRESET");
    expect(fresh.requests.length).toBe(1);

    const midway = serve((request, c) => {
      if (request.index === 0) c.socket.write(answer(200));
      else c.socket.end("HTTP/1.1 200 OK\r\ncontent-");
    });
    const http = client();
    await http.post(post(`${midway.url}/`));
    const second = await http.post(post(`${midway.url}/`));
    expect(second.failure?.code).toBe("ECONNRESET");
    expect(midway.requests.length).toBe(2);
  });

  test("malformed answers are failures, and their connections closed", async () => {
    const bad = [
      "HTTP/1.1 2xx OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: many\r\n\r\n",
      `HTTP/1.1 200 OK\r\n${"x-big: aaaaaaaa\r\n".repeat(5000)}\r\n`,
    ];
    const server = serve((request, c) => c.socket.write(bad[request.connection - 1] as string));
    const http = client();
    for (let i = 0; i < bad.length; i++) {
      const result = await http.post(post(`${server.url}/`));
      expect(result.statusCode).toBeNull();
      expect(result.failure?.message).toStartWith("malformed answer");
    }
    await waitUntil(() => server.connections.every((c) => c.closed), "the connections closed");
    expect(http.openConnections).toBe(0);
  });

  test("many exchanges at once each get their own answer", async () => {
    const STATUSES: number[] = [200, 201, 202, 409, 500];
    const server = serve((request, c) => {
      const n = /"n":(\d+)/.exec(request.body.toString())?.[1];
      setTimeout(() => c.socket.write(answer(STATUSES[Number(n) % 5] as number, `n=${n}`)), Number(n) % 7);
    });
    const http = client();
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, n) => http.post(post(`${server.url}/`, { body: `{"n":${n}}` }))),
    );
    expect(results.map((r) => [r.statusCode, r.responsePrefix])).toEqual(
      Array.from({ length: 300 }, (_, n) => [STATUSES[n % 5] as number, `n=${n}`]),
    );
  });
});

describe("timeouts and failures", () => {
  test("no answer within timeoutMs: TimeoutError, and the connection is closed", async () => {
    const server = serve(() => {});
    const http = client();
    const result = await http.post(post(`${server.url}/`, { timeoutMs: 100 }));
    expect(result.failure?.name).toBe("TimeoutError");
    await waitUntil(() => server.connections[0]?.closed === true, "the server saw the close");
    expect(http.openConnections).toBe(0);
    // As the sender describes it.
    const outcome = await sendWebhook(MESSAGE, {
      url: `${server.url}/`,
      secrets: [],
      timeoutMs: 100,
      allowPrivate: true,
      now: Date.now(),
    });
    expect(outcome.error).toBe("timeout: no answer within 100 ms");
  });

  test("a head in time and a body that stalls: the answer with what came (as the fetch path)", async () => {
    const server = serve((_, c) => c.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart"));
    const http = client();
    const result = await http.post(post(`${server.url}/`, { timeoutMs: 150 }));
    expect(result).toEqual({ statusCode: 200, responsePrefix: "part", retryAfter: null, failure: null });
    await waitUntil(() => http.openConnections === 0, "the connection closed");
  });

  test("refused: ECONNREFUSED as with fetch; an error text has no URL query", async () => {
    const refused = await client().post(post("http://127.0.0.1:9/hook?token=secret"));
    expect(refused.statusCode).toBeNull();
    expect(refused.failure?.code).toBe("ECONNREFUSED");
    useWebhookClient("fetch");
    const viaFetch = await makeExchange({
      url: "http://127.0.0.1:9/hook?token=secret",
      headers: {},
      body: "{}",
      timeoutMs: 2_000,
      pinned: false,
      serverName: undefined,
    });
    expect(refused.failure?.code).toBe(viaFetch.failure?.code as string);
    expect(JSON.stringify(refused.failure)).not.toContain("secret");
  });

  test("a URL fetch cannot take is a failure too", async () => {
    const result = await client().post(post("ftp://127.0.0.1/"));
    expect(result.failure?.name).toBe("TypeError");
  });
});

describe("TLS (a certificate for pinned.test only)", () => {
  test("verified against the server name, not the address; connections are not shared across names", async () => {
    const server = serve((request, c) => c.socket.write(answer(200, request.head.split("\r\n")[1])), {
      cert: PINNED_TEST_CERT,
      key: PINNED_TEST_KEY,
    });
    const http = client({ ca: PINNED_TEST_CERT });
    const to = (serverName: string) =>
      http.post(post(`${server.url}/tls`, { serverName, headers: { host: `${serverName}:${server.port}` } }));
    for (let i = 0; i < 2; i++) {
      expect(await to("pinned.test")).toMatchObject({
        statusCode: 200,
        responsePrefix: `host: pinned.test:${server.port}`,
      });
      const other = await to("other.test");
      expect(other.statusCode).toBeNull();
      expect(other.failure?.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
    }
    // pinned.test's connection was kept and used again; the other name's were never given a request.
    expect(server.requests.map((r) => r.connection)).toEqual([1, 1]);
    // Without the certificate trusted: not verified.
    const untrusted = await client().post(post(`${server.url}/`, { serverName: "pinned.test" }));
    expect(untrusted.failure?.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(server.requests.length).toBe(2);
  });
});

describe("OUTBOXD_WEBHOOK_CLIENT", () => {
  test("auto by default, native or fetch when asked; anything else is refused", () => {
    expect(loadConfig({}).webhookClient).toBe("auto");
    expect(loadConfig({ OUTBOXD_WEBHOOK_CLIENT: "fetch" }).webhookClient).toBe("fetch");
    expect(loadConfig({ OUTBOXD_WEBHOOK_CLIENT: "native" }).webhookClient).toBe("native");
    expect(() => loadConfig({ OUTBOXD_WEBHOOK_CLIENT: "curl" })).toThrow("OUTBOXD_WEBHOOK_CLIENT");
  });

  test("with an environment proxy set, requests not pinned to an address go through fetch and the proxy", async () => {
    // The raw server is the proxy: fetch sends it the absolute URL; the native client never would.
    const proxy = serve((_, c) => c.socket.write(answer(200, "via proxy")));
    const target = serve((_, c) => c.socket.write(answer(200, "direct")));
    const exchange = (pinned: boolean) =>
      `await makeExchange({ url: "${target.url}/hook", headers: {}, body: "{}", timeoutMs: 5000, pinned: ${pinned}, serverName: undefined })`;
    const script = `
      const { makeExchange } = await import(${JSON.stringify(new URL("../../src/dispatch/exchange.ts", import.meta.url).pathname)});
      const unpinned = ${exchange(false)};
      const pinned = ${exchange(true)};
      console.log(JSON.stringify([unpinned.responsePrefix, pinned.responsePrefix]));`;
    const child = Bun.spawn([process.execPath, "-e", script], {
      env: { ...process.env, HTTP_PROXY: proxy.url, NO_PROXY: "" },
      stdout: "pipe",
      stderr: "inherit",
    });
    expect(await child.exited).toBe(0);
    expect(JSON.parse(await new Response(child.stdout).text())).toEqual(["via proxy", "direct"]);
    expect(proxy.requests[0]?.head).toStartWith(`POST ${target.url}/hook HTTP/1.1`);
    expect(target.requests.length).toBe(1);
  });

  test("auto: native in this thread, fetch on the send worker; native and fetch: the same in both", async () => {
    const server = serve((_, c) => c.socket.write(answer(200)));
    const exchange = (): Exchange => ({
      url: `${server.url}/`,
      headers: {},
      body: "{}",
      timeoutMs: 5_000,
      pinned: false,
      serverName: undefined,
    });
    // fetch adds headers of its own (accept-encoding among them); the native client does not.
    useWebhookClient("auto");
    await makeExchange(exchange());
    useWebhookClient("fetch");
    await makeExchange(exchange());
    const byFetch = (i: number) => /\r\naccept-encoding:/i.test(server.requests[i]?.head ?? "");
    expect([byFetch(0), byFetch(1)]).toEqual([false, true]);
    if (!sendWorkerSupported()) return;
    for (const chosen of ["fetch", "native", "auto"] as const) {
      useWebhookClient(chosen);
      const worker = new SendWorker(quiet);
      try {
        expect((await worker.exchange(exchange())).statusCode).toBe(200);
      } finally {
        worker.stop();
      }
    }
    expect([byFetch(2), byFetch(3), byFetch(4)]).toEqual([true, false, true]);
  });
});
