// SSRF (DESIGN §1.7, §4): endpoint URLs are https and never internal, unless the operator
// allows private endpoints. Checked on create (and change) and again at every send, against
// the address actually connected to. DNS answers come from an injected resolver, so names
// "resolve" to loopback or the metadata address without touching real DNS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { endpointUrlProblem, isPublicAddress, type Resolver } from "../../src/endpoints/url-guard.ts";
import { expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

/** A resolver from a table; a name not in it does not resolve (ENOTFOUND). */
function tableResolver(table: Record<string, string[] | (() => string[])>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const entry = table[host];
    if (entry === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return typeof entry === "function" ? entry() : entry;
  };
  return Object.assign(resolve, { calls });
}

// Every refusal that OUTBOXD_ALLOW_PRIVATE_ENDPOINTS lifts says so (DESIGN §4).
const ALLOW_HINT =
  " (for a receiver on this machine or a private network, start outboxd with OUTBOXD_ALLOW_PRIVATE_ENDPOINTS=1)";

const DNS = {
  "loopback.example.com": ["127.0.0.1"],
  "metadata.example.com": ["169.254.169.254"],
  "v6-loopback.example.com": ["::1"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "mixed.example.com": ["93.184.215.14", "10.0.0.7"],
  "public.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
};

describe("isPublicAddress", () => {
  const refused = [
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "192.0.2.1",
    "198.18.0.1",
    "240.0.0.1",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:169.254.169.254",
    "::7f00:1", // IPv4-compatible ::127.0.0.1, which ipaddr.js alone calls unicast
    "fd00::1",
    "fc00::1",
    "fe80::1",
    "fe80::1%eth0",
    "fec0::1",
    "ff02::1",
    "64:ff9b::7f00:1", // NAT64 of 127.0.0.1
    "2002:7f00:1::", // 6to4 of 127.0.0.1
    "2001::1", // Teredo
    "2001:db8::1",
    "100::1",
    "not an address",
    "",
  ];
  const allowed = [
    "8.8.8.8",
    "93.184.215.14",
    "1.1.1.1",
    "::ffff:8.8.8.8",
    "2606:4700::1111",
    "2a00:1450::1",
  ];
  test.each(refused)("%p is not public", (address) => expect(isPublicAddress(address)).toBe(false));
  test.each(allowed)("%p is public", (address) => expect(isPublicAddress(address)).toBe(true));
});

describe("on create, with OUTBOXD_ALLOW_PRIVATE_ENDPOINTS off", () => {
  let server: TestServer;
  const resolver = tableResolver(DNS);

  beforeAll(async () => {
    server = await startServer({ OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "0" }, { dispatch: false, resolver });
  });
  afterAll(async () => {
    await server.stop();
  });

  const create = (url: string) => server.request("POST", "/v1/endpoints", { url });

  // Every spelling of an internal address that WHATWG URL parsing accepts.
  const oddSpellings = [
    "https://127.0.0.1/",
    "https://2130706433/",
    "https://0x7f.1/",
    "https://0x7f000001/",
    "https://0177.0.0.1/",
    "https://127.1/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/",
    "https://[::1]/",
    "https://[::]/",
    "https://[::7f00:1]/",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::ffff:a9fe:a9fe]/",
    "https://100.64.0.1/",
    "https://10.0.0.1:8443/hook",
    "https://192.168.0.1/",
    "https://[fd00::1]/",
    "https://[fe80::1]/",
    "https://224.0.0.1/",
    "https://0.0.0.0/",
    "https://0/",
    "https://[64:ff9b::7f00:1]/",
  ];
  test.each(oddSpellings)("%s is refused (422 /url)", async (url) => {
    const problem = expectProblem(await create(url), 422, "/url");
    expect(problem.errors[0].detail).toBe(`points at a private or internal address${ALLOW_HINT}`);
  });

  test.each(["https://localhost/", "https://localhost./", "https://api.localhost/", "https://intranet/"])(
    "%s, a local host name, is refused",
    async (url) => {
      expect(expectProblem(await create(url), 422, "/url").errors[0].detail).toBe(
        `points at a local host name${ALLOW_HINT}`,
      );
    },
  );

  test.each([
    "https://loopback.example.com/hook",
    "https://loopback.example.com./hook",
    "https://metadata.example.com/latest/meta-data/",
    "https://v6-loopback.example.com/",
    "https://mapped.example.com/",
    "https://mixed.example.com/", // one internal answer among public ones is enough
  ])("%s resolves to an internal address and is refused", async (url) => {
    expect(expectProblem(await create(url), 422, "/url").errors[0].detail).toBe(
      `resolves to a private or internal address${ALLOW_HINT}`,
    );
  });

  test("a name that resolves only to public addresses is accepted; one that does not resolve yet too", async () => {
    expectStatus(await create("https://public.example.com/hook"), 201);
    expectStatus(await create("https://not-yet.example.com/hook"), 201);
    expect(resolver.calls).toContain("not-yet.example.com");
  });

  test("plain http is refused without the allow setting, whatever the host, saying how to allow it", async () => {
    for (const url of ["http://example.com/", "http://public.example.com/hook", "http://93.184.215.14/"]) {
      expect(expectProblem(await create(url), 422, "/url").errors[0].detail).toBe(
        `must be an https URL${ALLOW_HINT}`,
      );
    }
  });

  test("other schemes, credentials and fragments are refused", async () => {
    const cases: [string, string][] = [
      ["ftp://public.example.com/", "must be an https URL"],
      ["file:///etc/passwd", "must be an https URL"],
      ["gopher://127.0.0.1:6379/_INFO", "must be an https URL"],
      ["javascript:alert(1)", "must be an https URL"],
      ["https://user:pass@public.example.com/", "must not contain credentials"],
      ["https://public.example.com/#frag", "must not contain a fragment"],
      ["/relative/path", "is not a valid absolute URL"],
      ["https://", "is not a valid absolute URL"],
    ];
    for (const [url, detail] of cases) {
      expect(expectProblem(await create(url), 422, "/url").errors[0].detail).toBe(detail);
    }
  });

  test("header and CRLF injection in a URL is refused, not silently cleaned up by URL parsing", async () => {
    for (const url of [
      "https://public.example.com/\r\nX-Injected: 1",
      "https://public.example.com/hook\nHost: 127.0.0.1",
      "https://public.example.com\r\n.evil/",
      "https://public.exa\tmple.com/",
      "https://public.example.com/a b",
      " https://public.example.com/",
      "https://public.example.com/\u0000",
      "https://public.example.com/\u007f",
    ]) {
      expect(expectProblem(await create(url), 422, "/url").errors[0].detail).toBe(
        "must not contain spaces or control characters",
      );
    }
    // Percent-encoded, they stay encoded in the request line: harmless, and accepted.
    expectStatus(await create("https://public.example.com/a%0D%0AX-Injected:%201"), 201);
  });

  test("a change of URL is checked by the same rules", async () => {
    const id = expectStatus(await create("https://public.example.com/patched"), 201).id;
    for (const url of ["https://127.0.0.1/", "https://metadata.example.com/", "http://public.example.com/"]) {
      expectProblem(await server.request("PATCH", `/v1/endpoints/${id}`, { url }), 422, "/url");
    }
    expect(expectStatus(await server.request("GET", `/v1/endpoints/${id}`), 200).url).toBe(
      "https://public.example.com/patched",
    );
  });

  test("nothing refused was stored", async () => {
    const listed = expectStatus(await server.request("GET", "/v1/endpoints?limit=500"), 200).data;
    for (const endpoint of listed)
      expect(endpoint.url).toMatch(/^https:\/\/(public|not-yet)\.example\.com\//);
  });
});

test("a create does not wait on DNS past its timeout: the name is taken as not resolving yet", async () => {
  const started = performance.now();
  const hanging: Resolver = () => new Promise<string[]>(() => {});
  expect(await endpointUrlProblem("https://slow.example.com/", false, hanging, 100)).toBeNull();
  expect(performance.now() - started).toBeLessThan(1000);
});

test("with OUTBOXD_ALLOW_PRIVATE_ENDPOINTS=1, loopback and plain http are allowed, the URL shape still checked", async () => {
  for (const [url, problem] of [
    ["http://127.0.0.1:9/hook", null],
    ["https://[::1]/", null],
    ["http://localhost:8080/", null],
    ["ftp://127.0.0.1/", "must be an http or https URL"],
    ["http://127.0.0.1/\r\nX: 1", "must not contain spaces or control characters"],
    ["http://u:p@127.0.0.1/", "must not contain credentials"],
  ] as const) {
    expect(await endpointUrlProblem(url, true, tableResolver({}))).toBe(problem);
  }
});
