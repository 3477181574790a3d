// `outboxd mcp --url <base URL>` (DESIGN §11): the MCP server over stdio for a local agent
// (Claude Desktop, Cursor…). It calls the HTTP API of the outboxd at --url with the token in
// OUTBOXD_TOKEN, so it works as well against a remote deployment. stdout carries the protocol
// only; every log line goes to stderr.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Scope } from "../auth/tokens.ts";
import { httpBaseUrl, option, UsageError } from "../cli/args.ts";
import { type ApiCaller, createMcpServer } from "./server.ts";

export async function mcpCommand(args: string[]): Promise<void> {
  const base = option(args, "url");
  if (!base) throw new UsageError("usage: OUTBOXD_TOKEN=otk_… outboxd mcp --url https://outboxd.example.com");
  const url = httpBaseUrl(base);
  const token = process.env.OUTBOXD_TOKEN?.trim();
  if (!token) throw new UsageError("OUTBOXD_TOKEN must hold the API token the agent acts with");
  const log = (msg: string, fields: Record<string, unknown> = {}) =>
    process.stderr.write(
      `${JSON.stringify({ level: "info", time: new Date().toISOString(), msg, ...fields })}\n`,
    );

  const call: ApiCaller = async (request) => {
    const response = await fetch(new URL(request.path, url), {
      method: request.method,
      headers: {
        authorization: `Bearer ${token}`,
        "user-agent": "outboxd-mcp",
        ...(request.body === undefined ? {} : { "content-type": "application/json" }),
        ...request.headers,
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
    const text = await response.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = { title: "Unexpected answer", status: response.status, detail: text.slice(0, 200) };
    }
    return { status: response.status, body };
  };

  // Which tools to list depends on the token's scopes: ask the server once, at start.
  const self = await call({ method: "GET", path: "/v1/whoami" });
  if (self.status !== 200) {
    const detail = (self.body as { detail?: string } | null)?.detail ?? `HTTP ${self.status}`;
    throw new UsageError(`${url.origin} refused OUTBOXD_TOKEN: ${detail}`);
  }
  const identity = self.body as { id: string; name: string; scopes: Scope[] };
  const server = createMcpServer(call, identity.scopes);
  await server.connect(new StdioServerTransport());
  log("mcp server on stdio", { url: url.origin, token: identity.id, scopes: identity.scopes });
}
