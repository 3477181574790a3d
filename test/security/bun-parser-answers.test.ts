// Requests Bun's HTTP parser refuses before outboxd sees them: a broken
// request line, an unsupported HTTP version, headers over Bun's limit. Bun 1.4.5 answers these
// itself with a bare status line (uWS's fixed httpErrorResponses) and has no hook to change
// them, so they cannot be problem+json; docs/security.md says so. This pins what does hold:
// a 4xx/5xx status line, no body (nothing of the request echoed), the connection closed, and
// the server unharmed. If Bun ever adds a hook or changes these, this test says so.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
});
afterAll(async () => {
  await server.stop();
});

function raw(text: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve) => {
    let answer = "";
    const socket = connect(Number(port), "127.0.0.1", () => socket.end(text));
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", () => resolve(answer));
  });
}

const SECRET = "otk_parser_never_echoes_this";
test.each([
  ["a request line that is not HTTP", `GARBAGE ${SECRET}\r\n\r\n`, 400],
  ["HTTP/2.0 in an HTTP/1 request line", `GET /healthz?${SECRET} HTTP/2.0\r\nhost: x\r\n\r\n`, 505],
  [
    "headers larger than Bun's limit",
    `GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${SECRET}${"a".repeat(20_000)}\r\n\r\n`,
    431,
  ],
  [
    "a Content-Length that is not a number",
    `POST /v1/commits HTTP/1.1\r\nhost: x\r\ncontent-length: ${SECRET}\r\n\r\n`,
    400,
  ],
])("%s: Bun's bare status line, no body, nothing echoed", async (_what, request, status) => {
  const answer = await raw(request);
  expect(answer).toStartWith(`HTTP/1.1 ${status} `);
  expect(answer.split("\r\n\r\n")[1] ?? "").toBe("");
  expect(answer).not.toContain(SECRET);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
});
