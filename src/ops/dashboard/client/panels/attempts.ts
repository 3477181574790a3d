// The most recent delivery attempts, newest first.
import type { Panel, PanelFactory } from "../panel.ts";
import type { Attempt, Endpoint, Page } from "../types.ts";

export const attemptsPanel: PanelFactory = ({
  dom: { h, table },
  format: { ago, event, answer, ms, clip, endpointName },
}): Panel => {
  const LIMIT = 25;

  function render(attempts: Page<Attempt>, endpoints: Page<Endpoint>): void {
    const byId = new Map(endpoints.data.map((e) => [e.id, e]));
    table(
      "attempts",
      ["when", "event", "endpoint", "answer", "duration", "response"],
      attempts.data.map((a) => [
        ago(a.at),
        // The delivery's id on hover: the event names it for people.
        h("span", { title: `delivery ${a.deliveryId}` }, event(a.type, a.aggregate, a.sequence)),
        endpointName(a.endpointId, a.endpointId === null ? undefined : byId.get(a.endpointId)),
        answer(a.statusCode, a.error),
        ms(a.durationMs),
        h("code", { class: "prefix" }, clip(a.responsePrefix ?? a.error ?? "", 60)),
      ]),
      "No attempts yet.",
    );
  }

  return {
    async load(get) {
      // The endpoints panel reads the same page: one request for both.
      const [attempts, endpoints] = await Promise.all([
        get<Page<Attempt>>(`/v1/attempts?limit=${LIMIT}`),
        get<Page<Endpoint>>("/v1/endpoints?limit=100"),
      ]);
      return () => render(attempts, endpoints);
    },
  };
};
