// A pinned webhook POST where the runtime's fetch cannot pin (src/dispatch/pinned-post.ts, used
// under Deno), run in a real Deno child against real servers on 127.0.0.1: it connects to the
// checked address while the receiver sees the endpoint's host in Host, TLS verifies the
// certificate against that name (not the address), and the answer's status, Retry-After and at
// most 1 KiB of its body come back; a receiver that never answers times out.
import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";
import { PINNED_LEAF_CERT, PINNED_LEAF_KEY, TEST_CA_CERT } from "../security/fixtures/tls.ts";

const seen: { host: string | null; url: string; body: string }[] = [];
const record = async (request: Request) => {
  seen.push({ host: request.headers.get("host"), url: request.url, body: await request.text() });
};
const tls = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: PINNED_LEAF_CERT, key: PINNED_LEAF_KEY },
  async fetch(request) {
    await record(request);
    return new Response("pinned");
  },
});
const plain = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    await record(request);
    const path = new URL(request.url).pathname;
    if (path === "/slow") return new Promise<Response>(() => {});
    if (path === "/busy")
      return new Response("b".repeat(5000), { status: 503, headers: { "retry-after": "7" } });
    return new Response(null, { status: 204 });
  },
});
const dir = tempDir("outboxd-pinned-post-");
afterAll(() => {
  tls.stop(true);
  plain.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

test("under Deno: the checked address is connected to, the name is what Host and TLS see", async () => {
  const ca = join(dir, "ca.pem");
  writeFileSync(ca, TEST_CA_CERT);
  const cases = [
    { url: `https://pinned.test:${tls.port}/hook?q=1`, address: "127.0.0.1" },
    { url: `https://other.test:${tls.port}/hook`, address: "127.0.0.1" },
    { url: `http://hooks.example:${plain.port}/x`, address: "127.0.0.1" },
    { url: `http://hooks.example:${plain.port}/busy`, address: "127.0.0.1" },
    { url: `http://hooks.example:${plain.port}/slow`, address: "127.0.0.1", timeoutMs: 300 },
  ];
  const proc = Bun.spawn({
    cmd: [
      join(REPO, "node_modules/.bin/deno"),
      "run",
      "-A",
      "--no-remote",
      "test/dispatch/pinned-post-probe.ts",
    ],
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      DENO_DIR: join(dir, "deno-dir"),
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
      // The test CA, trusted by this Deno (its node:https) only.
      NODE_EXTRA_CA_CERTS: ca,
      PINNED_CASES: JSON.stringify(cases),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
  const [named, otherName, http, busy, slow] = JSON.parse(stdout) as {
    answer?: { statusCode: number; retryAfter: string | null; responsePrefix: string | null };
    error?: { name: string; message: string };
  }[];
  expect(named).toEqual({ answer: { statusCode: 200, retryAfter: null, responsePrefix: "pinned" } });
  // The certificate names pinned.test only: checked against the URL's name, not the address.
  expect(otherName?.error?.message).toMatch(/other\.test|altname|certificate/i);
  expect(http).toEqual({ answer: { statusCode: 204, retryAfter: null, responsePrefix: null } });
  expect(busy?.answer).toMatchObject({ statusCode: 503, retryAfter: "7" });
  expect(busy?.answer?.responsePrefix).toBe("b".repeat(1024));
  expect(slow?.error?.name).toBe("TimeoutError");

  expect(seen.find((s) => s.url.includes("/hook?q=1"))).toEqual({
    host: `pinned.test:${tls.port}`,
    url: `https://pinned.test:${tls.port}/hook?q=1`,
    body: '{"a":1}',
  });
  expect(seen.find((s) => s.url.endsWith("/x"))?.host).toBe(`hooks.example:${plain.port}`);
  expect(seen.some((s) => s.url.includes("other.test"))).toBe(false);
}, 60_000);
