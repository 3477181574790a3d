// The endpoints with their health, last success and failure, pending and dead counts, and their
// controls (DESIGN §19): each one shown and editable (a PATCH of the JSON), a disabled endpoint
// with why and since when, and Enable and Recover buttons. A pull endpoint (DESIGN §12) shows,
// instead of a url, how many of its deliveries consumers hold leased.
import type { Panel, PanelFactory } from "../panel.ts";
import type { Endpoint, Page, Stats } from "../types.ts";

export const endpointsPanel: PanelFactory = ({
  dom: { byId, h, table },
  format: { ago, safeUrl, endpointName },
  api: { request },
  ui: { toast },
  refresh,
}): Panel => {
  const REASONS: Record<string, string> = {
    operator: "by an operator",
    gone: "the receiver answered 410 Gone",
    failing: "failing for its disableAfter",
  };

  function health(e: Endpoint): Node {
    if (e.disabled) {
      const why = REASONS[e.disabledReason ?? "operator"] ?? e.disabledReason ?? "";
      return h(
        "span",
        { class: "disabled-why" },
        h("span", { class: "pill bad" }, `disabled: ${why}`),
        h("div", { class: "muted" }, "since ", ago(e.disabledAt)),
        e.disabledDetail && e.disabledReason !== "operator"
          ? h("div", { class: "muted detail" }, e.disabledDetail)
          : null,
      );
    }
    const success = e.lastSuccessAt ? Date.parse(e.lastSuccessAt) : 0;
    const failure = e.lastFailureAt ? Date.parse(e.lastFailureAt) : 0;
    if (failure > success)
      return h(
        "span",
        {},
        h("span", { class: "pill warn" }, "failing"),
        e.failingSince ? h("div", { class: "muted" }, "since ", ago(e.failingSince)) : null,
      );
    if (success > 0) return h("span", { class: "pill ok" }, "healthy");
    return h("span", { class: "pill" }, "no deliveries yet");
  }

  function target(e: Endpoint, stats: Stats): Node {
    if (e.kind !== "pull") return h("span", { class: "url" }, safeUrl(e.url ?? ""));
    const leased = stats.endpoints.find((s) => s.id === e.id)?.inFlight ?? 0;
    return h("span", { class: "pill" }, `pull · ${leased} leased`);
  }

  /** The controls as they are, one line each. */
  function summary(e: Endpoint): Node {
    const lines = [
      `rate limit: ${e.rateLimit ? `${e.rateLimit.perSecond}/s, burst ${e.rateLimit.burst}` : "none"}`,
      `retry schedule: ${e.retrySchedule ? e.retrySchedule.join(", ") : "default backoff"}`,
      `disable after: ${e.disableAfter}`,
      `filter: ${e.filter ? `${e.filter.length} condition${e.filter.length === 1 ? "" : "s"}` : "none"}`,
    ];
    return h("div", { class: "controls-summary" }, ...lines.map((line) => h("div", {}, line)));
  }

  /** Sends the change; on success `done` (the editor closes), then every panel refreshes. */
  async function act(
    what: string,
    method: string,
    path: string,
    body: unknown,
    done = () => {},
  ): Promise<boolean> {
    try {
      await request(method, path, body);
      toast(what, "ok");
      done();
      await refresh();
      return true;
    } catch (error) {
      toast(`${what} failed: ${error instanceof Error ? error.message : String(error)}`, "bad");
      return false;
    }
  }

  /** See and edit each control: the JSON of the four, PATCHed as it is (null removes one). */
  function editor(e: Endpoint): Node {
    const controls = {
      rateLimit: e.rateLimit,
      retrySchedule: e.retrySchedule,
      disableAfter: e.disableAfter,
      filter: e.filter,
    };
    const text = h("textarea", {
      class: "controls-json",
      rows: "8",
      spellcheck: "false",
    }) as HTMLTextAreaElement;
    text.value = JSON.stringify(controls, null, 2);
    const save = h("button", { type: "button", class: "primary save-controls" }, "Save controls");
    const details = h(
      "details",
      { class: "controls" },
      h("summary", {}, "edit controls"),
      text,
      save,
    ) as HTMLDetailsElement;
    save.addEventListener("click", () => {
      let body: unknown;
      try {
        body = JSON.parse(text.value);
      } catch {
        toast("The controls are not valid JSON", "bad");
        return;
      }
      const path = `/v1/endpoints/${encodeURIComponent(e.id)}`;
      void act(`Saved the controls of ${e.id}`, "PATCH", path, body, () => {
        details.open = false;
      });
    });
    return details;
  }

  /** Enable, and Recover since a time (default: when it was disabled), for a disabled endpoint. */
  function actions(e: Endpoint): Node | null {
    if (!e.disabled) return null;
    const path = `/v1/endpoints/${encodeURIComponent(e.id)}`;
    const enable = h("button", { type: "button", class: "enable" }, "Enable");
    enable.addEventListener("click", () => void act(`Enabled ${e.id}`, "POST", `${path}/enable`, {}));
    const since = h("input", { type: "text", class: "recover-since", size: "24" }) as HTMLInputElement;
    since.value = e.disabledAt ?? new Date(Date.now() - 86_400_000).toISOString();
    const recover = h("button", { type: "button", class: "recover" }, "Recover");
    recover.addEventListener(
      "click",
      () => void act(`Recovered ${e.id}`, "POST", `${path}/recover`, { since: since.value.trim() }),
    );
    return h("div", { class: "endpoint-actions" }, enable, h("label", {}, "since ", since), recover);
  }

  function render(endpoints: Page<Endpoint>, stats: Stats): void {
    // While someone edits controls or types a recovery time, the table holds still.
    const editing = byId("endpoints").querySelector("details.controls[open], input.recover-since:focus");
    if (editing) return;
    byId("endpoint-count").textContent = String(endpoints.data.length) + (endpoints.next ? "+" : "");
    table(
      "endpoints",
      ["endpoint", "url", "health", "controls", "last success", "last failure", "pending", "dead"],
      endpoints.data.map((e) => [
        h("span", {}, endpointName(e.id, e), h("div", {}, h("code", { class: "muted" }, e.id))),
        target(e, stats),
        h("span", { "data-endpoint": e.id }, health(e), actions(e)),
        h("span", {}, summary(e), editor(e)),
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
