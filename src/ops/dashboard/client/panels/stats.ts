// The number cards at the top: pending, oldest pending, deadline exceeded, dead, delivered.
import type { Panel, PanelFactory } from "../panel.ts";
import type { Stats } from "../types.ts";

export const statsPanel: PanelFactory = ({ dom: { byId }, format: { age } }): Panel => {
  function setCard(id: string, value: string, sub: string, level: "" | "warn" | "bad" = ""): void {
    const card = byId(id);
    card.className = `card ${level}`;
    byId(`${id}-value`).textContent = value;
    byId(`${id}-sub`).textContent = sub;
  }

  function render(stats: Stats): void {
    setCard("stat-pending", String(stats.pending), `${stats.inFlight} in flight · ${stats.due} due now`);
    setCard(
      "stat-oldest",
      stats.pending === 0 ? "–" : age(stats.oldestPendingAgeSeconds),
      "since due, over pending deliveries",
      stats.oldestPendingAgeSeconds > 300 ? "warn" : "",
    );
    setCard(
      "stat-deadline",
      String(stats.deadlineExceededTotal),
      "deliveries past their deadline, ever",
      stats.deadlineExceededTotal > 0 ? "warn" : "",
    );
    setCard("stat-dead", String(stats.dead), "waiting for a replay", stats.dead > 0 ? "bad" : "");
    setCard("stat-delivered", String(stats.deliveredLastHour), "in the last hour");
  }

  return {
    async load(get) {
      const stats = await get<Stats>("/v1/stats");
      return () => render(stats);
    },
  };
};
