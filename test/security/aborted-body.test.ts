// Clients that go away mid-body: a partial body with a larger
// Content-Length, or a chunked body, then the connection closed. outboxd answers 400 or nothing
// (the client is gone), never a 500, and logs no error: a slow or flaky client is not a bug.
// Real sockets (node:net) against a real server, since fetch cannot send a broken request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { createLogger } from "../../src/ops/log.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const lines: string[] = [];
let server: TestServer;

beforeAll(async () => {
  server = await startServer(
    {},
    { dispatch: false, logger: createLogger("debug", (line) => lines.push(line)) },
  );
});
afterAll(async () => {
  await server.stop();
});

/** Sends `head` and `body` on a raw socket, then closes its sending side and later the socket. */
async function sendAndClose(head: string, body: string): Promise<string> {
  const { port } = new URL(server.url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  let answer = "";
  socket.on("data", (chunk) => {
    answer += chunk.toString("latin1");
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {});
  socket.write(head + body);
  socket.end();
  await closed;
  return answer;
}

function head(path: string, headers: Record<string, string>): string {
  const lines = [`POST ${path} HTTP/1.1`, "host: 127.0.0.1", `authorization: Bearer ${server.token}`];
  lines.push("content-type: application/json");
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

describe("a client that aborts mid-body", () => {
  const partial = '{"events": [{"type": "a.b", "aggregate": "x", "payload": {"n": 1';
  const cases: [string, string, () => Promise<string>][] = [
    [
      "a partial body shorter than its Content-Length",
      "/v1/commits",
      () => sendAndClose(head("/v1/commits", { "content-length": "5000" }), partial),
    ],
    [
      "a chunked body closed before its last chunk",
      "/v1/commits",
      () =>
        sendAndClose(
          head("/v1/commits", { "transfer-encoding": "chunked" }),
          `${partial.length.toString(16)}\r\n${partial}\r\n`,
        ),
    ],
    [
      "a chunked body closed inside a chunk",
      "/v1/tokens",
      () => sendAndClose(head("/v1/tokens", { "transfer-encoding": "chunked" }), `400\r\n${partial}`),
    ],
  ];

  test.each(cases)("%s is answered 400 or not at all, and logs no error", async (_what, path, send) => {
    const before = lines.length;
    const answer = await send();
    if (answer !== "") expect(answer).toStartWith("HTTP/1.1 400");
    // The handler may finish after the close: wait for the request's own log line.
    const logged = () =>
      lines
        .slice(before)
        .map((l) => JSON.parse(l) as { level: string; msg: string; path?: string; status?: number });
    await waitFor("the aborted request's log line", () =>
      logged().some((l) => l.msg === "request" && l.path === path),
    );
    const after = logged();
    expect(after.filter((l) => l.level === "error" || l.level === "warn")).toEqual([]);
    expect(after.some((l) => l.msg === "unhandled error")).toBe(false);
    expect(after.some((l) => l.status === 500)).toBe(false);
  });

  test("nothing was stored by the aborted commits", async () => {
    const events = expectStatus(await server.request("GET", "/v1/events?limit=500"), 200);
    expect(events.data).toEqual([]);
  });
});
