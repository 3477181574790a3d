// A route's documentation lives on the route: `scopedRoute(deps, spec)` (or `publicRoute(spec)`)
// is the middleware that both enforces who may call it and carries its OpenAPI operation, built
// here from `spec` and handed to hono-openapi's describeRoute. /openapi.json is assembled from
// these (document.ts), so method and path come from the router, scope from the guard that checks
// it, and statuses, request and answer schemas and examples from the spec beside the handler.
import type { MiddlewareHandler } from "hono";
import { type DescribeRouteOptions, describeRoute, resolver, uniqueSymbol } from "hono-openapi";
import type * as v from "valibot";
import type { Scope } from "../../auth/tokens.ts";
import { requireScope } from "../auth.ts";
import type { AppEnv, HttpDeps } from "../context.ts";
import { type Json, jsonSchema } from "./convert.ts";

/** The problem answers a route can give, by status: components.responses of the document. */
export const PROBLEM_RESPONSES = {
  400: { name: "MalformedJson", description: "Malformed JSON." },
  401: { name: "Unauthorized", description: "Missing or unknown token." },
  403: { name: "Forbidden", description: "The token lacks the scope." },
  404: { name: "NotFound", description: "Not found." },
  409: {
    name: "Conflict",
    description:
      "Conflict: a version conflict (with `currentVersion`), a reused event id, an idempotency key still " +
      "in progress, or a delivery in the wrong state.",
  },
  412: {
    name: "PreconditionFailed",
    description: "`If-Match` / `If-None-Match` failed (with `currentVersion`).",
  },
  413: { name: "BodyTooLarge", description: "The body exceeds `OUTBOXD_MAX_BODY_BYTES`." },
  422: { name: "Invalid", description: "A schema or rule violation; `errors` points into the request." },
  429: {
    name: "RateLimited",
    description:
      "The token sent more than `OUTBOXD_RATE_LIMIT` requests a second; retry after `Retry-After` seconds.",
  },
  503: {
    name: "Unavailable",
    description:
      "Unavailable: the database was busy past its timeout or could not be reached (nothing was written), " +
      "or the route needs a dispatcher this process does not run; retry (after `Retry-After` when given).",
  },
} as const;
export type ProblemStatus = keyof typeof PROBLEM_RESPONSES;

/** One answer of a route other than a problem. */
export interface Answer {
  description: string;
  /** The valibot schema of the JSON body (responses.ts). Omit only for a body that is not JSON. */
  schema?: v.GenericSchema;
  /** Defaults to application/json; null for an answer without a body (e.g. 204). */
  contentType?: string | null;
  example?: unknown;
  /** Response headers: name → description. */
  headers?: Record<string, string>;
}

export interface RouteSpec {
  /** The section of /docs, e.g. "Endpoints". */
  tag: string;
  summary: string;
  description?: string;
  /** Path parameters that are not plain strings (`{id}` is a string unless named here). */
  params?: Record<string, v.GenericSchema>;
  /** The query schema the handler validates with. */
  query?: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>;
  /** Request headers: name → description. */
  headers?: Record<string, string>;
  /** The body schema the handler validates with; required unless `required: false`. */
  body?: { schema: v.GenericSchema; required?: boolean; example?: unknown };
  /** Every status other than a problem, with its answer. */
  answers: Record<number, Answer>;
  /** Problem statuses; 401, 403, 429 and 503 are added for every route that needs a token. */
  problems?: ProblemStatus[];
  /** An additive route that DESIGN does not name (say so in docs/design.md too). */
  extension?: boolean;
  /** Defaults to the method and path in camelCase, e.g. `postEndpointsIdRotateSecret`. */
  operationId?: string;
}

export interface ScopedRouteSpec extends RouteSpec {
  /** A bearer token holding one of these scopes may call the route (admin holds every scope). */
  scopes: Scope | readonly Scope[];
  /** The route needs no token while `on` (e.g. OUTBOXD_METRICS_PUBLIC=1; `setting` names it). */
  publicWhen?: { on: boolean; setting: string };
}

const QUERY_DESCRIPTIONS: Record<string, string> = {
  limit: "Page size, 1-500 (default 100).",
  after: "The `next` cursor of the previous page.",
  aggregate: "Only this aggregate, ordered by sequence.",
  type: "Only events of this type.",
  status: "pending, delivered or dead.",
  endpoint: "Only deliveries to this endpoint id.",
  reason: "Only dead deliveries with this reason, e.g. deadline_exceeded.",
};

/** Documents a route anyone may call. */
export function publicRoute(spec: RouteSpec): MiddlewareHandler<AppEnv> {
  return describedLazily(() => operation(spec, [], "Public: no token."));
}

/**
 * describeRoute's middleware, whose operation is built on first read: by /openapi.json's first
 * request, not at start. Building every route's operation (valibot → JSON Schema for parameters)
 * took a tenth of the executable's cold start; a server that never serves the document never pays.
 */
function describedLazily(build: () => DescribeRouteOptions): MiddlewareHandler<AppEnv> {
  const middleware = describeRoute({});
  // hono-openapi reads the operation as `middleware[uniqueSymbol].spec` (generateSpecs).
  const carrier = (middleware as unknown as Record<symbol, { spec: DescribeRouteOptions }>)[uniqueSymbol];
  if (!carrier || !("spec" in carrier))
    throw new Error("hono-openapi changed: describeRoute has no spec carrier");
  let built: DescribeRouteOptions | undefined;
  Object.defineProperty(carrier, "spec", { enumerable: true, get: () => (built ??= build()) });
  return middleware;
}

/** Requires a token with one of `spec.scopes` (and takes from its rate limit), and documents the route. */
export function scopedRoute(deps: HttpDeps, spec: ScopedRouteSpec): MiddlewareHandler<AppEnv> {
  const scopes = [spec.scopes].flat();
  const guard = requireScope(deps, scopes);
  const open = spec.publicWhen?.on === true;
  const scopeText =
    `Scope: ${scopes.map((s) => `\`${s}\``).join(" or ")} (\`admin\` holds every scope)` +
    (spec.publicWhen ? `; public when \`${spec.publicWhen.setting}\`.` : ".");
  const middleware: MiddlewareHandler<AppEnv> = (c, next) => (open ? next() : guard(c, next));
  // describeRoute's middleware only carries the operation; ours carries it and guards.
  return Object.assign(
    middleware,
    describedLazily(() => operation(spec, scopes, scopeText)),
  );
}

function operation(spec: RouteSpec, scopes: readonly Scope[], scopeText: string): DescribeRouteOptions {
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(spec.answers)) responses[status] = response(answer);
  const statuses = new Set<ProblemStatus>(spec.problems ?? []);
  // A token is looked up in the database, so any such route can find it busy or out of reach (503).
  if (scopes.length > 0) for (const status of [401, 403, 429, 503] as const) statuses.add(status);
  for (const status of [...statuses].sort((a, b) => a - b)) {
    responses[status] = { $ref: `#/components/responses/${PROBLEM_RESPONSES[status].name}` };
  }
  const op: Json = {
    operationId: spec.operationId ?? ((route: { method: string; path: string }) => operationId(route)),
    tags: [spec.tag],
    summary: spec.summary,
    description: [scopeText, spec.description].filter(Boolean).join("\n\n"),
    security: scopes.length === 0 ? [] : [{ bearer: [] }],
    "x-outboxd-scope": scopes,
    ...(spec.extension ? { "x-outboxd-extension": true } : {}),
    responses,
  };
  const params = parameters(spec);
  if (params.length > 0) op.parameters = params;
  if (spec.body) {
    op.requestBody = {
      required: spec.body.required ?? true,
      content: {
        "application/json": {
          schema: resolver(spec.body.schema),
          ...(spec.body.example === undefined ? {} : { example: spec.body.example }),
        },
      },
    };
  }
  return op as DescribeRouteOptions;
}

function response(answer: Answer): Json {
  if (answer.contentType === null) return { description: answer.description };
  const contentType = answer.contentType ?? "application/json";
  if (contentType === "application/json" && !answer.schema) {
    throw new Error(`openapi: a JSON answer (${answer.description}) needs its schema`);
  }
  return {
    description: answer.description,
    ...(answer.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(answer.headers).map(([name, description]) => [
              name,
              { description, schema: { type: "string" } },
            ]),
          ),
        }
      : {}),
    content: {
      [contentType]: {
        schema: answer.schema ? resolver(answer.schema) : { type: "string" },
        ...(answer.example === undefined ? {} : { example: answer.example }),
      },
    },
  };
}

/** Path parameters (in path order: hono-openapi adds any left out as strings), query, headers. */
function parameters(spec: RouteSpec): Json[] {
  const out: Json[] = [];
  for (const [name, schema] of Object.entries(spec.params ?? {})) {
    out.push({ name, in: "path", required: true, schema: jsonSchema(schema) });
  }
  if (spec.query) {
    const query = jsonSchema(spec.query) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      out.push({
        name,
        in: "query",
        required: query.required?.includes(name) ?? false,
        ...(QUERY_DESCRIPTIONS[name] ? { description: QUERY_DESCRIPTIONS[name] } : {}),
        schema: wholeNumber(spec.query.entries[name]) ?? schema,
      });
    }
  }
  for (const [name, description] of Object.entries(spec.headers ?? {})) {
    out.push({ name, in: "header", required: false, description, schema: { type: "string" } });
  }
  return out;
}

/**
 * A query parameter read as digits and turned into a number (`limit`, `max`) is an integer with
 * its bounds, so a typed client sends numbers: its digits on the wire are the same.
 */
function wholeNumber(entry: v.GenericSchema | undefined): Json | undefined {
  type Node = { type: string; wrapped?: Node; pipe?: { type: string; requirement?: unknown }[] };
  let node = entry as Node | undefined;
  while (node?.wrapped) node = node.wrapped;
  const pipe = node?.pipe;
  if (!pipe?.some((step) => step.type === "transform")) return undefined;
  if (!pipe.some((step) => step.type === "regex" && String(step.requirement) === String(/^\d+$/)))
    return undefined;
  const bound = (type: string) => pipe.find((step) => step.type === type)?.requirement as number | undefined;
  const minimum = bound("min_value");
  const maximum = bound("max_value");
  return {
    type: "integer",
    ...(minimum === undefined ? {} : { minimum }),
    ...(maximum === undefined ? {} : { maximum }),
  };
}

/** `POST /v1/endpoints/:id/rotate-secret` → `postEndpointsIdRotateSecret`. */
export function operationId(route: { method: string; path: string }): string {
  const words = route.path
    .split("/")
    .filter((part) => part && part !== "v1")
    .map((part) =>
      part
        .replace(/^:/, "")
        .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => c?.toUpperCase() ?? ""),
    );
  return [route.method.toLowerCase(), ...words]
    .map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1)))
    .join("");
}
