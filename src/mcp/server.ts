// The MCP server (DESIGN §11) on top of the tools: lists the tools the token's scopes allow,
// validates each call's input, applies the agent rails, and turns the HTTP API's answer into a
// tool result. Every refusal — a bad input, a rail, a problem from the API — is a result with
// isError and the problem document as structuredContent, never a protocol error.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type * as v from "valibot";
import pkg from "../../package.json" with { type: "json" };
import { holds } from "../auth/authenticator.ts";
import type { Scope } from "../auth/tokens.ts";
import { standaloneJsonSchema } from "../http/openapi/convert.ts";
import { pointer, validate } from "../http/validation.ts";
import { faultsIn } from "../lib/faithful-json.ts";
import { type FieldError, Problem, problems } from "../lib/problem.ts";
import { type ApiRequest, TOOLS, type Tool } from "./tools.ts";

/** Sends one request to the HTTP API with the agent's token; the status and the parsed JSON body. */
export type ApiCaller = (request: ApiRequest) => Promise<{ status: number; body: unknown }>;

const INSTRUCTIONS =
  "outboxd stores business records and the events that announce their changes in one transaction, then " +
  "delivers the events as signed webhooks. Read a record before changing it and pass its version as " +
  "expectedVersion; give every commit or proposal an idempotencyKey and reuse it when you retry. Put confirmed " +
  "facts and reference ids in event payloads, not your reasoning.";

export function allowedTools(scopes: readonly Scope[]): Tool[] {
  return TOOLS.filter((tool) => tool.scopes.some((scope) => holds(scopes, scope)));
}

export function createMcpServer(call: ApiCaller, scopes: readonly Scope[]): Server {
  const server = new Server(
    { name: "outboxd", version: pkg.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const tools = allowedTools(scopes);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: inputSchema(tool),
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) {
      const known = TOOLS.some((t) => t.name === request.params.name);
      return refusal(
        known
          ? problems.forbidden(`this token's scopes do not allow ${request.params.name}`)
          : problems.notFound(`there is no tool ${request.params.name}`),
      );
    }
    try {
      const args = request.params.arguments ?? {};
      // What the HTTP API refuses in any JSON body (lone surrogates), refused here by the same
      // rule and before a request is built: such a string cannot even be put in a URL.
      const faults = faultsIn(args);
      if (faults.length > 0) {
        return refusal(problems.invalid(faults.map((f) => ({ pointer: pointer(f.path), detail: f.detail }))));
      }
      const input = validate(tool.input, args);
      const railed: FieldError[] = tool.rails?.(input) ?? [];
      if (railed.length > 0) return refusal(problems.invalid(railed));
      const answer = await call(tool.request(input));
      const body = (answer.body ?? {}) as Record<string, unknown>;
      if (answer.status >= 400) return refusal(inToolTerms(body));
      return { content: [{ type: "text", text: tool.summary(body) }], structuredContent: body };
    } catch (error) {
      if (error instanceof Problem) return refusal(error);
      throw error;
    }
  });
  return server;
}

/** A refusal as the agent sees it: isError, the problem document, its detail and pointers as text. */
function refusal(problem: Problem | Record<string, unknown>): CallToolResult {
  const document = problem instanceof Problem ? problem.toJSON() : problem;
  const errors = (document.errors as FieldError[] | undefined) ?? [];
  const lines = [
    String(document.detail ?? document.title ?? "refused"),
    ...errors.map((e) => `${e.pointer}: ${e.detail}`),
  ];
  return { isError: true, content: [{ type: "text", text: lines.join("\n") }], structuredContent: document };
}

/** The API names the Idempotency-Key header; for a tool it is the idempotencyKey input. */
function inToolTerms(problem: Record<string, unknown>): Record<string, unknown> {
  const errors = problem.errors as FieldError[] | undefined;
  if (!errors) return problem;
  return { ...problem, errors: errors.map((e) => ({ ...e, pointer: toolPointer(e.pointer) })) };
}

/**
 * The tool input's pointer for one the API gave: the header is the tool's `idempotencyKey`, and
 * a query or path parameter (`query:after`, `path:id`) is the tool input of the same name.
 */
function toolPointer(pointer: string): string {
  if (pointer === "header:Idempotency-Key") return "/idempotencyKey";
  const parameter = /^(?:query|path):(.+)$/.exec(pointer)?.[1];
  return parameter === undefined ? pointer : `/${parameter.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

function inputSchema(tool: Tool): { type: "object"; [key: string]: unknown } {
  return { ...standaloneJsonSchema(tool.input as v.GenericSchema), type: "object" };
}
