// The most recent delivery attempts, newest first.
import type { Panel, PanelFactory } from "../panel.ts";
import type { Attempt, Page } from "../types.ts";

export const attemptsPanel: PanelFactory = ({
  dom: { h, table },
  format: { ago, event, answer, ms, clip },
}): Panel => {
  const LIMIT = 25;

  function render(attempts: Page<Attempt>): void {
    table(
      "attempts",
      ["when", "delivery", "event", "endpoint", "answer", "duration", "response"],
      attempts.data.map((a) => [
        ago(a.at),
        h("code", {}, a.deliveryId),
        event(a.type, a.aggregate, a.sequence),
        h("code", {}, a.endpointId ?? "–"),
        answer(a.statusCode, a.error),
        ms(a.durationMs),
        h("code", { class: "prefix" }, clip(a.responsePrefix ?? a.error ?? "", 60)),
      ]),
      "No attempts yet.",
    );
  }

  return {
    async load(get) {
      const attempts = await get<Page<Attempt>>(`/v1/attempts?limit=${LIMIT}`);
      return () => render(attempts);
    },
  };
};
