// The OpenAPI 3.1 document of the whole API, assembled by hono-openapi from the operations the
// routes carry (route.ts), plus what belongs to the document itself: info, the bearer scheme,
// the named schemas and the problem answers.
import type { Hono } from "hono";
import { generateSpecs } from "hono-openapi";
import pkg from "../../../package.json" with { type: "json" };
import type { AppEnv } from "../context.ts";
import { componentSchemas, type Json } from "./convert.ts";
import { PROBLEM_RESPONSES } from "./route.ts";

const INFO = {
  title: "outboxd",
  version: pkg.version,
  summary: "A transactional outbox: commit records and events atomically, deliver them as signed webhooks.",
  description:
    "JSON over HTTP. Send `Authorization: Bearer <token>`; scopes: `admin` ⊃ everything, `commit` (⊃ " +
    "`propose`) = write commits and records and read records, `propose` = create proposals, `approve` = " +
    "decide them, `consume` = pull deliveries, `read` = every GET except secrets and streams; each route " +
    "names the scopes that may call it. Timestamps are RFC 3339 in UTC, " +
    "durations match `^\\d+(ms|s|m|h|d)$`, an optional field given as `null` means absent, unknown fields " +
    "are refused (422). Errors are RFC 9457 problem details. Routes marked `x-outboxd-extension` are " +
    "additive outboxd extensions of the contract.",
  license: { name: "MIT", identifier: "MIT" },
};

/** The sections of /docs in this order; a tag not listed here follows them. */
const TAG_ORDER = [
  "Commits and records",
  "Event types",
  "Proposals",
  "Endpoints",
  "Events and deliveries",
  "Tokens",
  "Operations",
  "Public",
];

/** The document for `app`: every route that carries an operation, in the order they were added. */
export async function buildOpenApi(app: Hono<AppEnv>): Promise<Json> {
  const generated = (await generateSpecs(app, {
    documentation: {
      info: INFO,
      security: [{ bearer: [] }],
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            description: "An outboxd API token (`otk_…`) or OUTBOXD_ADMIN_TOKEN. Each route names its scope.",
          },
        },
        schemas: componentSchemas(),
        responses: Object.fromEntries(
          Object.values(PROBLEM_RESPONSES).map(({ name, description }) => [
            name,
            {
              description,
              content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
            },
          ]),
        ),
      },
    },
    // Paths that look like files (/openapi.json, /snippet/verify.js) are routes too.
    excludeStaticFile: false,
  })) as unknown as Json & { paths: Record<string, Record<string, { tags?: string[] }>> };
  const used = Object.values(generated.paths).flatMap((item) =>
    Object.values(item).flatMap((op) => op.tags ?? []),
  );
  const tags = [...new Set([...TAG_ORDER.filter((tag) => used.includes(tag)), ...used])];
  return {
    openapi: "3.1.0",
    info: generated.info,
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    security: generated.security,
    tags: tags.map((name) => ({ name })),
    paths: generated.paths,
    components: generated.components,
  };
}
