import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers/process.ts";
import { startServer } from "../helpers/server.ts";

test("GET /snippet/verify.ts and verify.js serve the snippet files byte for byte, without a token", async () => {
  const server = await startServer({}, { dispatch: false });
  try {
    for (const [file, type] of [
      ["verify.ts", "text/typescript"],
      ["verify.js", "text/javascript"],
    ] as const) {
      const response = await fetch(`${server.url}/snippet/${file}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toStartWith(type);
      expect(await response.text()).toBe(readFileSync(join(REPO, "src/receiver", file), "utf8"));
    }
  } finally {
    await server.stop();
  }
});
