// GET / (DESIGN §3): the dashboard page. Public: the page itself holds no data.
import type { App } from "../../http/context.ts";
import { publicRoute } from "../../http/openapi/route.ts";
import { DASHBOARD_HEADERS, dashboardPage } from "./page.ts";

export function dashboardRoutes(app: App): void {
  app.get(
    "/",
    publicRoute({
      operationId: "getDashboard",
      tag: "Public",
      summary: "The dashboard",
      description:
        "Its data comes from this API with the token the user enters (kept in sessionStorage only).",
      answers: { 200: { description: "HTML.", contentType: "text/html" } },
    }),
    (c) => c.body(dashboardPage(), 200, DASHBOARD_HEADERS),
  );
}
