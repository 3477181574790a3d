// consume() under Bun, the .ts and the generated .js, against an outboxd in this process (Deno
// and Node.js run the same check from scripts/test-snippet.sh).
import { afterAll, beforeAll, describe, test } from "bun:test";
import * as js from "../../src/receiver/verify.js";
import * as ts from "../../src/receiver/verify.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { checkConsume } from "./consume-check.mjs";

describe("consume()", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ OUTBOXD_RETRY_BASE: "20ms", OUTBOXD_RETRY_CAP: "100ms" });
  });
  afterAll(async () => {
    await server.stop();
  });

  for (const [name, snippet] of [
    ["verify.ts", ts],
    ["verify.js", js],
  ] as const) {
    test(`${name}: polls, applies once in order per aggregate, nacks a failed apply, acks`, async () => {
      await checkConsume(snippet, { url: server.url, adminToken: server.token });
    });
  }
});
