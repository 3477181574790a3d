// `npm pack` of clients/typescript from a clean clone of this repository (committed files only),
// installed into an empty Node.js project: the ESM entry points, the receiver subpath, the
// declarations (type-checked by TypeScript with NodeNext resolution) and a real commit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
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

const npm = ["npm", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];

describe("npm pack of @outboxd/client", () => {
  test("from a clean clone: packs, installs into an empty project, imports, type-checks and commits", async () => {
    const clone = tempDir("outboxd-clone-");
    const consumer = tempDir("outboxd-consumer-");
    dirs.push(clone, consumer);
    await runToEnd(["git", "clone", "--quiet", REPO, clone], "/");
    const pkg = join(clone, "clients/typescript");
    await runToEnd([...npm, "ci"], pkg);
    const packed = JSON.parse(
      await runToEnd([...npm, "pack", "--json", "--pack-destination", consumer], pkg),
    );
    const files = (packed[0].files as { path: string }[]).map((f) => f.path).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        "dist/index.js",
        "dist/index.d.ts",
        "dist/errors.js",
        "dist/schema.gen.d.ts",
        "dist/receiver.js",
        "dist/receiver.d.ts",
        "package.json",
        "README.md",
      ]),
    );
    expect(files.some((f) => f.includes("node_modules") || f.startsWith("scripts/"))).toBe(false);

    writeFileSync(
      join(consumer, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module" }),
    );
    const tarball = readdirSync(consumer).find((f) => f.endsWith(".tgz")) as string;
    await runToEnd([...npm, "install", join(consumer, tarball)], consumer);

    writeFileSync(
      join(consumer, "check.ts"),
      `import { createClient, OutboxdError, type CommitResult } from "@outboxd/client";
import { verifyWebhook, WebhookError, type OutboxEvent } from "@outboxd/client/receiver";

const client = createClient({ baseUrl: process.env.BASE_URL ?? "", token: process.env.TOKEN ?? "" });
const result: CommitResult = await client.commit({
  records: [{ collection: "packs", id: "p-1", data: { ok: true } }],
  events: [{ type: "pack.checked", payload: {} }],
});
let conflict: OutboxdError | undefined;
try {
  await client.commit({ records: [{ collection: "packs", id: "p-1", expectedVersion: 0, data: {} }] });
} catch (error) {
  if (error instanceof OutboxdError) conflict = error;
}
let code: string | undefined;
try {
  const event: OutboxEvent = await verifyWebhook({ headers: {}, body: "{}" }, "whsec_AAAA");
  console.log(event.id);
} catch (error) {
  if (error instanceof WebhookError) code = error.code;
}
console.log(JSON.stringify({ commitId: result.commitId, status: conflict?.status, currentVersion: conflict?.currentVersion, code }));
`,
    );
    // The declarations, as a TypeScript user resolves them (NodeNext: the package's exports map),
    // then the JavaScript under Node.js.
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
          noEmit: true,
          skipLibCheck: false,
        },
        files: ["check.ts", "env.d.ts"],
      }),
    );
    writeFileSync(
      join(consumer, "env.d.ts"),
      "declare const process: { env: Record<string, string | undefined> };\n",
    );
    // Type-checked and compiled in one go (emitting only once the check passed).
    await runToEnd(
      [
        "node",
        join(pkg, "node_modules/typescript/bin/tsc"),
        "-p",
        consumer,
        "--noEmit",
        "false",
        "--noEmitOnError",
        "--outDir",
        join(consumer, "out"),
      ],
      consumer,
    );
    const output = await runToEnd(["node", join(consumer, "out/check.js")], consumer, {
      BASE_URL: server.url,
      TOKEN: server.token,
    });
    const answer = JSON.parse(output.trim().split("\n").at(-1) ?? "{}");
    expect(answer.commitId).toStartWith("cmt_");
    expect(answer.status).toBe(409);
    expect(answer.currentVersion).toBe(1);
    expect(answer.code).toBe("missing_header");
  }, 240_000);
});
