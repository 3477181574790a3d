// The newest dead letters, each with a Replay button (needs the admin scope).
import type { Panel, PanelFactory } from "../panel.ts";
import type { Delivery, Endpoint, Page, Stats } from "../types.ts";

export const deadLettersPanel: PanelFactory = ({
  dom: { byId, h, table },
  format: { event, answer, endpointName },
  api: { ApiError, request },
  ui: { toast },
  refresh,
}): Panel => {
  const LIMIT = 50;

  async function replay(id: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    button.textContent = "Replaying…";
    try {
      await request("POST", `/v1/deliveries/${encodeURIComponent(id)}/replay`);
      toast(`Replayed ${id}: pending again.`, "ok");
    } catch (error) {
      const message =
        error instanceof ApiError && error.status === 403
          ? "Replaying needs a token with the admin scope."
          : `Replay of ${id} failed: ${error instanceof Error ? error.message : String(error)}`;
      toast(message, "bad");
      button.disabled = false;
      button.textContent = "Replay";
    }
    await refresh();
  }

  function render(dead: Page<Delivery>, total: number, endpoints: Page<Endpoint>): void {
    const byEndpoint = new Map(endpoints.data.map((e) => [e.id, e]));
    byId("dead-count").textContent =
      total > dead.data.length ? `${dead.data.length} newest of ${total}` : String(total);
    table(
      "dead-letters",
      ["event", "endpoint", "reason", "last answer", "attempts", ""],
      dead.data.map((d) => {
        const button = h("button", { type: "button", class: "replay", "data-delivery": d.id }, "Replay");
        button.addEventListener("click", () => void replay(d.id, button as HTMLButtonElement));
        return [
          h(
            "span",
            {},
            event(d.type, d.aggregate, d.sequence),
            h("div", {}, h("code", { class: "muted" }, d.id)),
          ),
          endpointName(d.endpointId, byEndpoint.get(d.endpointId)),
          h("span", { class: "reason" }, d.deadReason ?? "–"),
          answer(d.lastStatusCode, d.lastError),
          String(d.attemptCount),
          button,
        ];
      }),
      "No dead letters.",
    );
  }

  return {
    async load(get) {
      const [dead, stats, endpoints] = await Promise.all([
        get<Page<Delivery>>(`/v1/deliveries?status=dead&limit=${LIMIT}`),
        get<Stats>("/v1/stats"),
        get<Page<Endpoint>>("/v1/endpoints?limit=100"),
      ]);
      return () => render(dead, stats.dead, endpoints);
    },
  };
};
