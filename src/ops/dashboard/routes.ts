// GET / (DESIGN §3): the dashboard page. Public: the page itself holds no data.
import type { App } from "../../http/context.ts";
import { DASHBOARD_HEADERS, dashboardPage } from "./page.ts";

export function dashboardRoutes(app: App): void {
  app.get("/", (c) => c.body(dashboardPage(), 200, DASHBOARD_HEADERS));
}
