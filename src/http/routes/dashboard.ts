// GET / (DESIGN §3): the dashboard page (src/ops/dashboard). Public: the page itself holds no
// data. Registered here so that http uses ops, not the other way round.
import { DASHBOARD_HEADERS, dashboardPage } from "../../ops/dashboard/page.ts";
import type { App } from "../context.ts";
import { publicRoute } from "../openapi/route.ts";

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
