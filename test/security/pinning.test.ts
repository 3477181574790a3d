// SSRF at send time (DESIGN §1.7, §4): the sender resolves the name itself, checks every
// address, and connects to a checked one by IP while keeping the name for the Host header and
// TLS. Proven here without public DNS: the pinned request against a local TLS server whose
// certificate names only `pinned.test`, the sender's refusals and budget, and end to end a name
// that rebinds to loopback or the metadata address between create and send.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import {
  pinnedRequest,
  sendWebhook,
  type WebhookMessage,
  withoutQueries,
} from "../../src/dispatch/sender.ts";
import type { Resolver } from "../../src/endpoints/url-guard.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { PINNED_TEST_CERT, PINNED_TEST_KEY } from "./fixtures/tls.ts";

const PUBLIC_V4 = "93.184.215.14";
const PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c";

describe("pinnedRequest", () => {
  test("the URL gets the address; Host and the TLS name keep the name", () => {
    expect(pinnedRequest(new URL("https://hooks.example.com/a/b?x=1&y=%20"), PUBLIC_V4)).toEqual({
      url: `https://${PUBLIC_V4}/a/b?x=1&y=%20`,
      host: "hooks.example.com",
      serverName: "hooks.example.com",
    });
  });

  test("a port stays in both the URL and the Host header; an IPv6 address is bracketed", () => {
    expect(pinnedRequest(new URL("https://hooks.example.com:8443/p"), PUBLIC_V6)).toEqual({
      url: `https://[${PUBLIC_V6}]:8443/p`,
      host: "hooks.example.com:8443",
      serverName: "hooks.example.com",
    });
    // The default port is not a port: no `:443` in either.
    expect(pinnedRequest(new URL("https://hooks.example.com:443/p"), PUBLIC_V4).host).toBe(
      "hooks.example.com",
    );
  });

  test("an IPv4-mapped answer connects over IPv4; a trailing dot is not part of the TLS name", () => {
    expect(pinnedRequest(new URL("https://hooks.example.com./p"), `::ffff:${PUBLIC_V4}`)).toEqual({
      url: `https://${PUBLIC_V4}/p`,
      host: "hooks.example.com.",
      serverName: "hooks.example.com",
    });
  });

  test("an international name travels as punycode; an address literal has no TLS name", () => {
    expect(pinnedRequest(new URL("https://bücher.example/"), PUBLIC_V4)).toMatchObject({
      host: "xn--bcher-kva.example",
      serverName: "xn--bcher-kva.example",
    });
    expect(pinnedRequest(new URL(`https://${PUBLIC_V4}/`), PUBLIC_V4).serverName).toBeUndefined();
    expect(pinnedRequest(new URL(`https://[${PUBLIC_V6}]/`), PUBLIC_V6).serverName).toBeUndefined();
  });
});

describe("Bun's fetch honours a pinned request (a TLS server whose certificate names only pinned.test)", () => {
  let tls: ReturnType<typeof Bun.serve>;
  const seen: { host: string | null; url: string }[] = [];
  beforeAll(() => {
    tls = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: PINNED_TEST_CERT, key: PINNED_TEST_KEY },
      fetch(request) {
        seen.push({ host: request.headers.get("host"), url: request.url });
        return new Response("pinned");
      },
    });
  });
  afterAll(() => {
    tls.stop(true);
  });

  // The init the sender builds from a PinnedRequest, plus the fixture as a trusted CA.
  const send = (name: string) => {
    const pinned = pinnedRequest(new URL(`https://${name}:${tls.port}/hook?q=1`), "127.0.0.1");
    return fetch(pinned.url, {
      method: "POST",
      body: "{}",
      headers: { host: pinned.host },
      redirect: "manual",
      proxy: false,
      tls: { serverName: pinned.serverName as string, ca: PINNED_TEST_CERT },
    });
  };

  test("connected to the address, the server sees the name in Host, and the certificate verifies for it", async () => {
    const response = await send("pinned.test");
    expect(await response.text()).toBe("pinned");
    expect(seen.at(-1)).toEqual({
      host: `pinned.test:${tls.port}`,
      url: `https://pinned.test:${tls.port}/hook?q=1`,
    });
  });

  test("the certificate is checked against the name, not the address: another name fails, each time", async () => {
    for (let i = 0; i < 2; i++) {
      expect(send("other.test")).rejects.toMatchObject({ code: "ERR_TLS_CERT_ALTNAME_INVALID" });
      // and a connection kept alive for pinned.test is not reused for another name
      expect(await (await send("pinned.test")).text()).toBe("pinned");
    }
  });
});

describe("sendWebhook without private endpoints", () => {
  const message: WebhookMessage = {
    id: "00000000-0000-4000-8000-000000000000",
    type: "pin.test",
    aggregate: "pin/1",
    previousSequence: null,
    sequence: 1,
    payload: "{}",
    occurredAt: Date.now(),
    attempt: 1,
    traceparent: null,
  };
  const send = (url: string, resolver: Resolver, timeoutMs = 2000) =>
    sendWebhook(message, {
      url,
      secrets: ["whsec_AAAA"],
      timeoutMs,
      allowPrivate: false,
      resolver,
      now: Date.now(),
    });

  test("a name resolving to loopback, the metadata address or a mix is blocked, and resolved once", async () => {
    for (const answer of [
      ["127.0.0.1"],
      ["169.254.169.254"],
      ["::1"],
      [PUBLIC_V4, "10.0.0.1"],
      ["fd00::1", PUBLIC_V6],
    ]) {
      let calls = 0;
      const outcome = await send("https://hooks.example.com/x", async () => {
        calls++;
        return answer;
      });
      expect(outcome).toMatchObject({
        statusCode: null,
        error: "blocked: the endpoint URL resolves to a private or internal address",
      });
      expect(calls).toBe(1);
    }
  });

  test("a name that does not resolve, or resolves to nothing, is a dns error (retried), not a block", async () => {
    const missing = await send("https://gone.example.com/x", async () => {
      throw Object.assign(new Error("nope"), { code: "ENOTFOUND" });
    });
    expect(missing.error).toBe("dns: cannot resolve gone.example.com (ENOTFOUND)");
    expect((await send("https://empty.example.com/x", async () => [])).error).toBe(
      "dns: cannot resolve empty.example.com (no addresses)",
    );
  });

  test("a resolver that hangs is cut off by the send timeout", async () => {
    const started = performance.now();
    const outcome = await send("https://slow.example.com/x", () => new Promise<string[]>(() => {}), 300);
    expect(outcome.error).toBe("timeout: no answer within 300 ms");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test("URLs the create-time rules refuse are refused at send too (a row written before the rules)", async () => {
    const never: Resolver = async () => {
      throw new Error("not asked");
    };
    for (const [url, error] of [
      ["http://hooks.example.com/x", "must be an https URL"],
      ["https://127.0.0.1/x", "points at a private or internal address"],
      ["https://[::ffff:7f00:1]/x", "points at a private or internal address"],
      ["https://localhost/x", "points at a local host name"],
      ["https://hooks.example.com/\r\nX: 1", "must not contain spaces or control characters"],
    ]) {
      expect((await send(url as string, never)).error).toBe(`blocked: the endpoint URL ${error}`);
    }
  });

  test("error texts lose the query of any URL they quote", () => {
    expect(
      withoutQueries(
        'ERR_TLS_CERT_ALTNAME_INVALID fetching "https://93.184.215.14/hook?token=s3cret#f". For more',
      ),
    ).toBe('ERR_TLS_CERT_ALTNAME_INVALID fetching "https://93.184.215.14/hook". For more');
    expect(withoutQueries("ECONNREFUSED: Unable to connect")).toBe("ECONNREFUSED: Unable to connect");
  });
});

describe("end to end, OUTBOXD_ALLOW_PRIVATE_ENDPOINTS off: a name that rebinds after create", () => {
  let server: TestServer;
  let listener: Server;
  let port = 0;
  let connections = 0;
  const answers: Record<string, string[]> = {};
  const resolver: Resolver = async (host) => {
    const answer = answers[host];
    if (!answer) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return answer;
  };

  beforeAll(async () => {
    // Any TCP connection to this port counts: nothing may reach it.
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    port = (listener.address() as { port: number }).port;
    server = await startServer(
      { OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "0", OUTBOXD_RETRY_BASE: "50ms", OUTBOXD_RETRY_CAP: "100ms" },
      { resolver },
    );
  });
  afterEach(() => {
    expect(connections).toBe(0);
  });
  afterAll(async () => {
    await server.stop();
    listener.close();
  });

  const attemptsOf = async (deliveryId: string) =>
    expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200) as {
      error: string | null;
      statusCode: number | null;
    }[];

  test.each([
    ["loopback", ["127.0.0.1"]],
    ["the metadata address", ["169.254.169.254"]],
    ["IPv6 loopback", ["::1"]],
    ["a mix of public and loopback", [PUBLIC_V4, "127.0.0.1"]],
  ])(
    "public at create, %s at send: blocked, logged on the attempt, nothing connects",
    async (_what, atSend) => {
      const host = `rebind-${crypto.randomUUID().slice(0, 8)}.example.com`;
      answers[host] = [PUBLIC_V4];
      const endpoint = expectStatus(
        await server.request("POST", "/v1/endpoints", { url: `https://${host}:${port}/hook` }),
        201,
      );
      answers[host] = atSend;
      const committed = expectStatus(
        await server.request("POST", "/v1/commits", {
          events: [{ type: "rebind.x", aggregate: `rebind/${host}`, endpoints: [endpoint.id] }],
        }),
        201,
      );
      const deliveryId = committed.events[0].deliveries[0].id;
      const attempts = await waitFor("two refused attempts", async () => {
        const list = await attemptsOf(deliveryId);
        return list.length >= 2 && list;
      });
      for (const attempt of attempts) {
        expect(attempt).toMatchObject({
          statusCode: null,
          error: "blocked: the endpoint URL resolves to a private or internal address",
        });
      }
      const delivery = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}`), 200);
      expect(delivery.status).toBe("pending");
      expect(delivery.lastError).toStartWith("blocked:");
      // The endpoint test route goes through the same check.
      const pinged = expectStatus(await server.request("POST", `/v1/endpoints/${endpoint.id}/test`), 200);
      expect(pinged.error).toStartWith("blocked:");
    },
  );

  test("a name that did not resolve at create and resolves to loopback at send is blocked", async () => {
    const host = "later.example.com";
    const endpoint = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: `https://${host}:${port}/hook` }),
      201,
    );
    const pinged = expectStatus(await server.request("POST", `/v1/endpoints/${endpoint.id}/test`), 200);
    expect(pinged.error).toBe(`dns: cannot resolve ${host} (ENOTFOUND)`);
    answers[host] = ["127.0.0.1"];
    const blocked = expectStatus(await server.request("POST", `/v1/endpoints/${endpoint.id}/test`), 200);
    expect(blocked.error).toBe("blocked: the endpoint URL resolves to a private or internal address");
  });
});
