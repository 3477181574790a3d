// GET /openapi.json and GET /docs (DESIGN §3), both public. The document is assembled from the
// routes of the app they are registered on (openapi/document.ts), once, on the first request;
// each route documents itself where it is declared (openapi/route.ts). The `webhooks` map (the
// registered event types, DESIGN §9) is added as it is at each request.
import type { Hono } from "hono";
import type { App, AppEnv } from "./context.ts";
import { docsPage } from "./docs-page.ts";
import type { Json } from "./openapi/convert.ts";
import { buildOpenApi } from "./openapi/document.ts";
import { publicRoute } from "./openapi/route.ts";
import { OpenApiAnswer } from "./responses.ts";

export function openApiRoutes(app: App, webhooks: () => Promise<Json> = async () => ({})): void {
  let routes: Promise<Json> | undefined;
  const get = async () => {
    routes ??= buildOpenApi(app as Hono<AppEnv>);
    return { ...(await routes), webhooks: await webhooks() };
  };
  app.get(
    "/openapi.json",
    publicRoute({
      tag: "Public",
      summary: "This document",
      description: "`webhooks` lists the registered event types (DESIGN §9) as they are now.",
      answers: { 200: { description: "OpenAPI 3.1.", schema: OpenApiAnswer } },
    }),
    async (c) => c.json(await get()),
  );
  app.get(
    "/docs",
    publicRoute({
      tag: "Public",
      summary: "This document as a page",
      answers: { 200: { description: "HTML.", contentType: "text/html" } },
    }),
    async (c) => c.html(docsPage(await get())),
  );
}
