// @outboxd/client keeps the secrets it sends (DESIGN §14): a token that no header can carry is
// refused by createClient without echoing it, and no error the client makes (message, detail,
// cause) quotes a header value: not a fetch that quotes the bad header (Node's does), not a
// proxy that echoes the request. Checked under Bun from source and under Node on the bundled
// client, against real sockets on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { createClient } from "../../clients/typescript";
import { REPO } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const SECRET = "SECRETVALUE42";
const BAD_TOKENS = [
  `otk_${SECRET}\r`,
  `otk_${SECRET}\r\nx-injected: 1`,
  `otk_${SECRET}\n`,
  `otk_${SECRET}\u0000`,
  `otk_${SECRET}\t`,
  `otk_${SECRET}\u00e9`,
  `otk_${SECRET}\u2028`,
  "",
];

/** Every text an error carries: message, detail, title, body and the whole cause chain. */
function textsOf(error: unknown): string {
  const parts: string[] = [];
  let at: unknown = error;
  for (let depth = 0; at && depth < 6; depth++) {
    const e = at as { message?: unknown; detail?: unknown; title?: unknown; body?: unknown; cause?: unknown };
    parts.push(
      String(at),
      String(e.message),
      String(e.detail),
      String(e.title),
      JSON.stringify(e.body ?? null),
    );
    at = e.cause;
  }
  return parts.join("\n");
}

/** A TCP server that answers every request 400 text/plain, echoing the request's head. */
let echo: Server;
let echoUrl = "";
/** A port nothing listens on (a server bound and closed). */
let closedUrl = "";
let dir = "";

beforeAll(async () => {
  echo = createServer((socket) => {
    let head = "";
    socket.on("data", (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      const body = `bad request:\n${head.split("\r\n\r\n")[0]}`;
      socket.end(
        `HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body, "latin1")}\r\nconnection: close\r\n\r\n${body}`,
        "latin1",
      );
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  echoUrl = `http://127.0.0.1:${(echo.address() as { port: number }).port}`;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  closedUrl = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  dir = tempDir("outboxd-client-secrets-");
});
afterAll(async () => {
  await new Promise<void>((resolve) => echo.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe("under Bun, from source", () => {
  test.each(BAD_TOKENS.map((t) => [JSON.stringify(t), t]))(
    "createClient refuses the token %s without echoing it",
    (_name, token) => {
      let thrown: unknown;
      try {
        createClient({ baseUrl: echoUrl, token });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect(String((thrown as Error).message)).toContain("the token must be");
      expect(textsOf(thrown)).not.toContain(SECRET);
    },
  );

  test("a bad idempotencyKey or traceparent is refused without echoing it; nothing is sent", async () => {
    const client = createClient({ baseUrl: closedUrl, token: "otk_fine", retry: { attempts: 1 } });
    for (const options of [{ idempotencyKey: `k-${SECRET}\r\n` }, { traceparent: `00-${SECRET}\u0000` }]) {
      const error = await client.commit({ events: [{ type: "a.b" }] }, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect(textsOf(error)).not.toContain(SECRET);
    }
  });

  test("a proxy's answer that echoes the request, and a network error, quote no header value", async () => {
    const token = `otk_${SECRET}`;
    const key = `key-${SECRET}`;
    const proxied = createClient({ baseUrl: echoUrl, token, retry: { attempts: 1 } });
    const answered = await proxied
      .commit({ events: [{ type: "a.b" }] }, { idempotencyKey: key })
      .catch((e) => e);
    expect(answered.status).toBe(400);
    expect(answered.detail).toContain("bad request");
    expect(textsOf(answered)).not.toContain(SECRET);
    const listed = await proxied.listAll("/v1/events").catch((e) => e);
    expect(listed.status).toBe(400);
    expect(textsOf(listed)).not.toContain(SECRET);

    const unreachable = createClient({ baseUrl: closedUrl, token, retry: { attempts: 1 } });
    const failed = await unreachable
      .commit({ events: [{ type: "a.b" }] }, { idempotencyKey: key })
      .catch((e) => e);
    expect(failed.status).toBe(0);
    expect(failed.cause).toBeInstanceOf(Error);
    expect(textsOf(failed)).not.toContain(SECRET);
  });
});

describe("under Node, the bundled client", () => {
  test("the same refusals and errors quote no header value", async () => {
    const bundle = join(dir, "client.mjs");
    const built = Bun.spawnSync(
      [
        process.execPath,
        "build",
        join(REPO, "clients/typescript/src/index.ts"),
        "--target=node",
        `--outfile=${bundle}`,
      ],
      { cwd: REPO },
    );
    expect(built.exitCode).toBe(0);
    const script = join(dir, "check.mjs");
    writeFileSync(
      script,
      `import { createClient } from "./client.mjs";
const [echoUrl, closedUrl, badTokens] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4])];
${textsOf.toString()}
const out = [];
for (const token of badTokens) {
  try { createClient({ baseUrl: closedUrl, token }); out.push({ token, refused: false }); }
  catch (e) { out.push({ token, refused: e instanceof TypeError, text: textsOf(e) }); }
}
for (const baseUrl of [echoUrl, closedUrl]) {
  const client = createClient({ baseUrl, token: "otk_${SECRET}", retry: { attempts: 1 } });
  const e = await client.commit({ events: [{ type: "a.b" }] }, { idempotencyKey: "key-${SECRET}" }).catch((e) => e);
  out.push({ baseUrl, status: e.status, text: textsOf(e) });
}
console.log(JSON.stringify(out));
`,
    );
    const run = Bun.spawn(["node", script, echoUrl, closedUrl, JSON.stringify(BAD_TOKENS)], {
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr] = await Promise.all([
      new Response(run.stdout).text(),
      new Response(run.stderr).text(),
    ]);
    expect({ code: await run.exited, stderr }).toEqual({ code: 0, stderr: "" });
    const results = JSON.parse(stdout) as { refused?: boolean; status?: number; text: string }[];
    expect(results.slice(0, BAD_TOKENS.length).map((r) => r.refused)).toEqual(BAD_TOKENS.map(() => true));
    expect(results.slice(BAD_TOKENS.length).map((r) => r.status)).toEqual([400, 0]);
    for (const result of results) expect(result.text).not.toContain(SECRET);
  });
});
