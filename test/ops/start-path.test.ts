// What a start loads (cold start): a process on a local file that has no event type
// with a schema never loads ajv, @libsql/client or the MCP SDK; the first schema loads ajv, and
// payloads are checked against it from then on.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { runProbe } from "../helpers/probe.ts";

test("a commit on a local file loads neither ajv, @libsql/client nor the MCP SDK; the first schema loads ajv", async () => {
  expect(await runProbe(join(import.meta.dir, "start-path-probe.ts"))).toEqual({
    statuses: [201, 201, 422],
    afterCommit: { ajv: false, libsqlClient: false, mcp: false },
    afterSchema: { ajv: true, libsqlClient: false, mcp: false },
  });
});
