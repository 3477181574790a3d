// `npm install <repo>/clients/typescript` from a clean clone, with no build step and no install
// inside the client's folder (npm links a folder and installs none of its dependencies): the
// committed dist/ is imported by Node.js and by Bun, its declarations type-check (NodeNext), and
// the pull helpers (poll, ack, nack, stream) and a numeric `limit` work against a real server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO, runToEnd } from "../helpers/process.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const CHECK = `import { createClient, OutboxdError, type Pulled } from "@outboxd/client";
import { WebhookError } from "@outboxd/client/receiver";

const client = createClient({ baseUrl: process.env.BASE_URL ?? "", token: process.env.TOKEN ?? "" });
const made = await client.api.POST("/v1/endpoints", { body: { kind: "pull" } });
const endpoint = made.data?.id ?? "";
const commit = (id: string) =>
  client.commit({ events: [{ type: "install.checked", aggregate: "installs/" + id, payload: { id } }] });

await commit("a");
const polled = await client.poll(endpoint, { max: 10, wait: "5s" });
const acked = await client.ack(endpoint, polled.data);

await commit("b");
const stop = new AbortController();
let streamed: Pulled | undefined;
for await (const delivery of client.stream(endpoint, { max: 5, signal: stop.signal })) {
  streamed = delivery;
  break;
}
stop.abort();
const nacked = await client.nack(endpoint, streamed ? [streamed] : [], { retryAfter: "0s" });
const again = await client.poll(endpoint, { wait: "5s" });
await client.ack(endpoint, again.data);

const events = await client.listAll("/v1/events", { query: { limit: 1 } });
let refused = 0;
try {
  await client.poll("ep_missing");
} catch (error) {
  if (error instanceof OutboxdError) refused = error.status;
}
console.log(JSON.stringify({
  polled: polled.data.map((d) => d.event.aggregate),
  acked: acked.acked,
  streamed: streamed?.event.aggregate,
  nacked: nacked.nacked,
  again: again.data.map((d) => d.event.aggregate),
  events: events.length,
  refused,
  receiver: typeof WebhookError,
}));
`;

test("npm install <path> from a clean clone: Node.js and Bun import it, its types check, pull works", async () => {
  const clone = tempDir("outboxd-clone-");
  const consumer = tempDir("outboxd-consumer-");
  dirs.push(clone, consumer);
  await runToEnd(["git", "clone", "--quiet", REPO, clone], "/");
  writeFileSync(
    join(consumer, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  await runToEnd(
    ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", join(clone, "clients/typescript")],
    consumer,
  );
  // Nothing was built or installed in the clone's client folder.
  expect(existsSync(join(clone, "clients/typescript/node_modules"))).toBe(false);

  writeFileSync(join(consumer, "check.ts"), CHECK);
  writeFileSync(
    join(consumer, "env.d.ts"),
    "declare const process: { env: Record<string, string | undefined> };\n",
  );
  writeFileSync(
    join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2022", "DOM"],
        types: [],
        strict: true,
        skipLibCheck: false,
        noEmitOnError: true,
        outDir: "out",
      },
      files: ["check.ts", "env.d.ts"],
    }),
  );
  // TypeScript from this checkout's client devDependencies (the consumer brings its own).
  await runToEnd(
    ["node", join(REPO, "clients/typescript/node_modules/typescript/bin/tsc"), "-p", consumer],
    consumer,
  );
  const env = { BASE_URL: server.url, TOKEN: server.token };
  const expected = {
    polled: ["installs/a"],
    acked: 1,
    streamed: "installs/b",
    nacked: 1,
    again: ["installs/b"],
    events: 2,
    refused: 404,
    receiver: "function",
  };
  const last = (output: string) => JSON.parse(output.trim().split("\n").at(-1) ?? "{}");
  expect(last(await runToEnd(["node", join(consumer, "out/check.js")], consumer, env))).toMatchObject({
    ...expected,
  });
  // Bun runs the TypeScript as it is; the same package resolves to the same dist/.
  const second = { ...expected, polled: ["installs/a"], events: 4 };
  expect(last(await runToEnd([process.execPath, join(consumer, "check.ts")], consumer, env))).toMatchObject({
    ...second,
  });
}, 240_000);
