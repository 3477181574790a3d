// The MCP server (DESIGN §11), driven by the official SDK's own client over both transports:
// Streamable HTTP at POST /mcp, and stdio through `outboxd mcp --url` as a real child process.
// Tools per scope, the rails (idempotencyKey, expectedVersion) as isError results naming the
// field, propose then approve, and the seed's completion check: the event with its deliveries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expectStatus } from "./helpers/assertions.ts";
import { REPO } from "./helpers/process.ts";
import { startReceiver, type TestReceiver, waitFor } from "./helpers/receiver.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let receiver: TestReceiver;
const tokens: Record<string, string> = {};
const clients: Client[] = [];

const ALL_TOOLS = [
  "commit",
  "get_endpoint",
  "get_event",
  "get_proposal",
  "get_record",
  "get_stats",
  "list_dead_letters",
  "list_endpoints",
  "list_events",
  "list_records",
  "propose_commit",
  "replay_delivery",
];

async function overHttp(token: string): Promise<Client> {
  const client = new Client({ name: "outboxd-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function overStdio(token: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["src/main.ts", "mcp", "--url", server.url],
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", OUTBOXD_TOKEN: token },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "outboxd-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return { client, stderr: () => stderr };
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
// biome-ignore lint/suspicious/noExplicitAny: tool results are read freely
const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<any> =>
  client.callTool({ name, arguments: args });

beforeAll(async () => {
  server = await startServer();
  receiver = startReceiver();
  expectStatus(
    await server.request("POST", "/v1/endpoints", { url: receiver.url, eventTypes: ["return.*"] }),
    201,
  );
  for (const scopes of [
    ["read"],
    ["commit"],
    ["propose"],
    ["approve"],
    ["propose", "read"],
    ["approve", "read"],
  ]) {
    const name = scopes.join("+");
    tokens[name] = expectStatus(await server.request("POST", "/v1/tokens", { name, scopes }), 201).token;
  }
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.stop();
  await receiver.stop();
});

describe("Streamable HTTP at POST /mcp", () => {
  test("lists only the tools the token's scopes allow (commit holds propose; no approve tool)", async () => {
    expect(await names(await overHttp(tokens.read as string))).toEqual([
      "get_endpoint",
      "get_event",
      "get_proposal",
      "get_record",
      "get_stats",
      "list_dead_letters",
      "list_endpoints",
      "list_events",
      "list_records",
    ]);
    expect(await names(await overHttp(tokens.commit as string))).toEqual([
      "commit",
      "get_proposal",
      "get_record",
      "list_records",
      "propose_commit",
    ]);
    expect(await names(await overHttp(tokens.propose as string))).toEqual([
      "get_proposal",
      "get_record",
      "list_records",
      "propose_commit",
    ]);
    expect(await names(await overHttp(tokens.approve as string))).toEqual([
      "get_proposal",
      "get_record",
      "list_records",
    ]);
    expect(await names(await overHttp(server.token))).toEqual(ALL_TOOLS);
  });

  test("the input schemas come from the API's schemas: strict, with the rails' fields required", async () => {
    const tools = (await (await overHttp(server.token)).listTools()).tools;
    const commit = tools.find((t) => t.name === "commit");
    expect(commit?.inputSchema.required).toEqual(["idempotencyKey"]);
    expect(Object.keys(commit?.inputSchema.properties ?? {})).toEqual([
      "records",
      "events",
      "idempotencyKey",
    ]);
    expect(commit?.inputSchema.additionalProperties).toBe(false);
    const propose = tools.find((t) => t.name === "propose_commit");
    expect(propose?.inputSchema.required).toEqual(["commit", "summary", "idempotencyKey"]);
  });

  test("without a valid token, /mcp is 401; GET is 405 (stateless)", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const refused = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(init),
    });
    expect(refused.status).toBe(401);
    expect((await fetch(`${server.url}/mcp`)).status).toBe(405);
  });

  test("commit: the rails refuse a missing idempotencyKey or expectedVersion as isError naming the field", async () => {
    const agent = await overHttp(tokens.commit as string);
    const records = [{ collection: "returns", id: "m-1", expectedVersion: 0, data: { status: "requested" } }];
    const noKey = await call(agent, "commit", { records });
    expect(noKey.isError).toBe(true);
    expect(noKey.structuredContent.status).toBe(422);
    expect(noKey.structuredContent.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
      "/idempotencyKey",
    ]);
    expect(noKey.content[0].text).toContain("/idempotencyKey");

    const noVersion = await call(agent, "commit", {
      records: [{ collection: "returns", id: "m-1", data: { status: "requested" } }],
      idempotencyKey: "m-1-create",
    });
    expect(noVersion.isError).toBe(true);
    expect(noVersion.structuredContent.errors[0].pointer).toBe("/records/0/expectedVersion");
    expect(expectStatus(await server.request("GET", "/v1/records/returns/m-1"), 404)).toBeDefined();

    const done = await call(agent, "commit", { records, idempotencyKey: "m-1-create" });
    expect(done.isError).toBeUndefined();
    expect(done.structuredContent.commitId).toStartWith("cmt_");
    expect(done.structuredContent.records).toEqual([
      { collection: "returns", id: "m-1", version: 1, deleted: false },
    ]);
    const again = await call(agent, "commit", { records, idempotencyKey: "m-1-create" });
    expect(again.structuredContent.commitId).toBe(done.structuredContent.commitId);

    // A stale expectedVersion is the API's 409 with currentVersion, as a tool result.
    const stale = await call(agent, "commit", { records, idempotencyKey: "m-1-again" });
    expect(stale.isError).toBe(true);
    expect(stale.structuredContent).toMatchObject({ status: 409, currentVersion: 1 });
    // A tool the token's scopes do not allow is refused the same way.
    const forbidden = await call(agent, "get_stats", {});
    expect(forbidden.isError).toBe(true);
    expect(forbidden.structuredContent.status).toBe(403);
  });

  test("every input the API would refuse is a tool refusal with its pointer, never a protocol error", async () => {
    const agent = await overHttp(server.token);
    const refused = async (name: string, args: Record<string, unknown>, pointer: string, detail?: string) => {
      // A JSON-RPC error would reject this call; a refusal is a result with isError.
      const answer = await call(agent, name, args);
      expect({ name, args, isError: answer.isError }).toEqual({ name, args, isError: true });
      const errors = answer.structuredContent.errors as { pointer: string; detail: string }[];
      expect(errors.map((e) => e.pointer)).toContain(pointer);
      if (detail) expect(errors.find((e) => e.pointer === pointer)?.detail).toBe(detail);
      expect(answer.content[0].text).toContain(pointer);
    };
    const events = [{ type: "m.x", aggregate: "m/1" }];
    const proposal = { summary: "s", commit: { events } };
    for (const key of ["a\r\nb", "a\u0000b", "caf\u00e9", "a\tb", "", "k".repeat(256), "x\ud800"]) {
      await refused("commit", { events, idempotencyKey: key }, "/idempotencyKey");
      await refused("propose_commit", { ...proposal, idempotencyKey: key }, "/idempotencyKey");
    }
    for (const name of [".", ".."]) {
      await refused("get_record", { collection: name, id: "tokens" }, "/collection");
      await refused("get_record", { collection: "returns", id: name }, "/id");
      await refused("list_records", { collection: name }, "/collection");
    }
    await refused("get_event", { id: "x\ud800" }, "/id");
    await refused("get_proposal", { id: "\udc00" }, "/id");
    await refused("replay_delivery", { id: "a\ud800b" }, "/id");
    await refused("list_events", { aggregate: "m/\ud800" }, "/aggregate");
    await refused("list_dead_letters", { after: "\ud800" }, "/after");
    // The API's own refusals of query and path parameters point at the tool's input too.
    await refused("list_events", { after: "not-a-cursor" }, "/after");
    await refused("commit", { events }, "/idempotencyKey", "is required");
    await refused("propose_commit", { commit: { events }, idempotencyKey: "k" }, "/summary", "is required");
    await refused("get_record", { collection: "returns" }, "/id", "is required");
  });

  test("propose, a person approves over HTTP, the agent reads the event with its deliveries", async () => {
    const agent = await overHttp(tokens["propose+read"] as string);
    const record = await call(agent, "get_record", { collection: "returns", id: "m-1" });
    expect(record.structuredContent.version).toBe(1);
    const proposed = await call(agent, "propose_commit", {
      summary: "Approve return m-1: item arrived unused.",
      commit: {
        records: [{ collection: "returns", id: "m-1", expectedVersion: 1, data: { status: "approved" } }],
        events: [{ type: "return.approved", payload: { returnId: "m-1" } }],
      },
      idempotencyKey: "m-1-approve",
    });
    expect(proposed.isError).toBeUndefined();
    const id = proposed.structuredContent.id as string;
    expect(proposed.structuredContent.status).toBe("pending");
    const person = await server.request("POST", "/v1/tokens", { name: "person", scopes: ["approve"] });
    const approved = await fetch(`${server.url}/v1/proposals/${id}/approve`, {
      method: "POST",
      headers: { authorization: `Bearer ${person.body.token}` },
    });
    expect(approved.status).toBe(200);

    const after = await call(agent, "get_proposal", { id });
    expect(after.structuredContent.status).toBe("approved");
    const eventId = after.structuredContent.result.events[0].id as string;
    await waitFor("the webhook to be delivered", () => receiver.received.length > 0);
    const event = await waitFor("get_event to show the delivery delivered", async () => {
      const answer = await call(agent, "get_event", { id: eventId });
      return answer.structuredContent.deliveries?.[0]?.status === "delivered" ? answer : null;
    });
    expect(event.structuredContent).toMatchObject({
      type: "return.approved",
      aggregate: "returns/m-1",
      sequence: 1,
    });
    expect(event.content[0].text).toContain("1 delivered");
  });
});

test("get_endpoint and list_endpoints show an endpoint's controls and why it is disabled", async () => {
  const created = await server.request("POST", "/v1/endpoints", {
    url: "https://controls.example.com/hook",
    rateLimit: { perSecond: 5 },
    retrySchedule: ["10s"],
    filter: [{ path: "/data/x", op: "exists", value: true }],
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect((await server.request("PATCH", `/v1/endpoints/${id}`, { disabled: true })).status).toBe(200);
  const reader = await overHttp(tokens.read as string);
  const one = await call(reader, "get_endpoint", { id });
  expect(one.structuredContent).toMatchObject({
    id,
    rateLimit: { perSecond: 5, burst: 5 },
    retrySchedule: ["10s"],
    disableAfter: "5d",
    filter: [{ path: "/data/x", op: "exists", value: true }],
    disabled: true,
    disabledReason: "operator",
  });
  expect(one.content[0].text).toContain("disabled (operator)");
  const all = await call(reader, "list_endpoints", { limit: 500 });
  expect(all.structuredContent.data.map((e: { id: string }) => e.id)).toContain(id);
});

describe("stdio: outboxd mcp --url (a real child process)", () => {
  test("lists tools by the token's scopes, proposes, reads the proposal; logs only on stderr", async () => {
    const { client, stderr } = await overStdio(tokens["propose+read"] as string);
    expect(await names(client)).toEqual([
      "get_endpoint",
      "get_event",
      "get_proposal",
      "get_record",
      "get_stats",
      "list_dead_letters",
      "list_endpoints",
      "list_events",
      "list_records",
      "propose_commit",
    ]);
    const refused = await call(client, "propose_commit", {
      summary: "no key",
      commit: { records: [{ collection: "returns", id: "s-1", expectedVersion: 0, data: {} }] },
    });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.errors[0].pointer).toBe("/idempotencyKey");
    const proposed = await call(client, "propose_commit", {
      summary: "Create return s-1",
      commit: {
        records: [{ collection: "returns", id: "s-1", expectedVersion: 0, data: { status: "requested" } }],
      },
      idempotencyKey: "s-1",
    });
    expect(proposed.isError).toBeUndefined();
    const read = await call(client, "get_proposal", { id: proposed.structuredContent.id });
    expect(read.structuredContent).toMatchObject({
      status: "pending",
      proposedBy: { tokenName: "propose+read" },
    });
    expect(read.structuredContent.current).toEqual([
      { collection: "returns", id: "s-1", version: 0, data: null, deleted: false },
    ]);
    const stats = await call(client, "get_stats", {});
    expect(typeof stats.structuredContent.pending).toBe("number");
    await waitFor("the start line on stderr", () => stderr().includes("mcp server on stdio"));
  });

  test("refuses to start without OUTBOXD_TOKEN or with a token the server refuses (exit 2)", async () => {
    for (const env of [{}, { OUTBOXD_TOKEN: "otk_unknown" }]) {
      const proc = Bun.spawn({
        cmd: [process.execPath, "src/main.ts", "mcp", "--url", server.url],
        cwd: REPO,
        env: { PATH: process.env.PATH ?? "", ...env },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect(code).toBe(2);
      expect(stdout).toBe("");
    }
  });
});
