// The endpoints with their health, last success and failure, pending and dead counts. A pull
// endpoint (DESIGN §12) shows, instead of a url, how many of its deliveries consumers hold leased.
import type { Panel, PanelFactory } from "../panel.ts";
import type { Endpoint, Page, Stats } from "../types.ts";

export const endpointsPanel: PanelFactory = ({
  dom: { byId, h, table },
  format: { ago, safeUrl, endpointName },
}): Panel => {
  function health(e: Endpoint): Node {
    if (e.disabled)
      return h("span", { class: "pill bad" }, `disabled: ${e.disabledReason ?? "by an operator"}`);
    const success = e.lastSuccessAt ? Date.parse(e.lastSuccessAt) : 0;
    const failure = e.lastFailureAt ? Date.parse(e.lastFailureAt) : 0;
    if (failure > success) return h("span", { class: "pill warn" }, "failing");
    if (success > 0) return h("span", { class: "pill ok" }, "healthy");
    return h("span", { class: "pill" }, "no deliveries yet");
  }

  function target(e: Endpoint, stats: Stats): Node {
    if (e.kind !== "pull") return h("span", { class: "url" }, safeUrl(e.url ?? ""));
    const leased = stats.endpoints.find((s) => s.id === e.id)?.inFlight ?? 0;
    return h("span", { class: "pill" }, `pull · ${leased} leased`);
  }

  function render(endpoints: Page<Endpoint>, stats: Stats): void {
    byId("endpoint-count").textContent = String(endpoints.data.length) + (endpoints.next ? "+" : "");
    table(
      "endpoints",
      ["endpoint", "url", "health", "last success", "last failure", "pending", "dead"],
      endpoints.data.map((e) => [
        h("span", {}, endpointName(e.id, e), h("div", {}, h("code", { class: "muted" }, e.id))),
        target(e, stats),
        health(e),
        ago(e.lastSuccessAt),
        ago(e.lastFailureAt),
        String(e.pending),
        h("span", { class: e.dead > 0 ? "num bad" : "num" }, String(e.dead)),
      ]),
      "No endpoints yet: POST /v1/endpoints.",
    );
  }

  return {
    async load(get) {
      const [endpoints, stats] = await Promise.all([
        get<Page<Endpoint>>("/v1/endpoints?limit=100"),
        get<Stats>("/v1/stats"),
      ]);
      return () => render(endpoints, stats);
    },
  };
};
