// POST /mcp (DESIGN §11): the MCP server over Streamable HTTP, stateless — every request builds
// its server from the caller's token and answers in JSON, so any machine behind a load balancer
// can answer any request. The tools call this same app in-process with the caller's own
// Authorization header: the same routes, scopes, validation and rate limit as over /v1.
import type { Context } from "hono";
import * as v from "valibot";
import { SCOPES } from "../auth/tokens.ts";
import type { App, AppEnv, HttpDeps } from "../http/context.ts";
import { publicRoute, scopedRoute } from "../http/openapi/route.ts";
import { ProblemAnswer } from "../http/responses.ts";
import { problems } from "../lib/problem.ts";
import type { ApiCaller } from "./server.ts";
import type { ApiRequest } from "./tools.ts";

/** A JSON-RPC 2.0 message (or a batch of them), as the MCP transport answers. */
const JsonRpcAnswer = v.union([
  v.looseObject({ jsonrpc: v.literal("2.0") }),
  v.array(v.looseObject({ jsonrpc: v.literal("2.0") })),
]);
const TAG = "MCP";
const NOT_OFFERED = {
  405: {
    description: "Not offered: POST only (`Allow: POST`).",
    schema: ProblemAnswer,
    contentType: "application/problem+json",
  },
};

export function mcpRoutes(app: App, deps: HttpDeps): void {
  app.post(
    "/mcp",
    scopedRoute(deps, {
      scopes: SCOPES.filter((s) => s !== "admin"),
      tag: TAG,
      summary: "The MCP server for AI agents (Streamable HTTP, stateless)",
      description:
        "A JSON-RPC message of the Model Context Protocol, answered in JSON (send `Accept: application/json, " +
        "text/event-stream`). Any token: the tools listed are those its scopes allow (docs/agents.md); each " +
        "calls this API with the same token, and its refusals are the API's problems as tool results with " +
        "`isError`.",
      answers: {
        200: { description: "The JSON-RPC answer.", schema: JsonRpcAnswer },
        202: { description: "A notification or answer was accepted.", contentType: null },
      },
      problems: [400],
    }),
    async (c) => {
      // The SDK is loaded on the first MCP request, not at start: it is most of a cold start's
      // module loading (~200 ms), and most deployments never receive an MCP request.
      const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
        import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
        import("./server.ts"),
      ]);
      const authorization = c.req.header("authorization") ?? "";
      const call: ApiCaller = (request) => callApp(app, authorization, request);
      const server = createMcpServer(call, c.get("identity").scopes);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        return await transport.handleRequest(c.req.raw);
      } finally {
        void server.close();
      }
    },
  );
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
  const notOffered = (c: Context<AppEnv>) => {
    c.header("Allow", "POST");
    const problem = problems.methodNotAllowed("the MCP endpoint is stateless: POST only");
    return c.json(problem.toJSON(), 405, { "content-type": "application/problem+json" });
  };
  app.get(
    "/mcp",
    publicRoute({
      tag: TAG,
      summary: "Not offered: no server-initiated stream (stateless)",
      answers: NOT_OFFERED,
    }),
    notOffered,
  );
  app.delete(
    "/mcp",
    publicRoute({ tag: TAG, summary: "Not offered: there is no session to end", answers: NOT_OFFERED }),
    notOffered,
  );
}

async function callApp(
  app: App,
  authorization: string,
  request: ApiRequest,
): Promise<{ status: number; body: unknown }> {
  const response = await app.fetch(
    new Request(`http://outboxd.internal${request.path}`, {
      method: request.method,
      headers: {
        authorization,
        ...(request.body === undefined ? {} : { "content-type": "application/json" }),
        ...request.headers,
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
}
