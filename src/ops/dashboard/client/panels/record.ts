// A record's page (DESIGN §13), shown while the address ends in #/records/<collection>/<id>:
// its versions newest first, what changed from the version before, who committed each and
// when, and the events each commit sent with their delivery status. Event aggregates elsewhere
// on the dashboard link here (format.event).
import type { Panel, PanelFactory } from "../panel.ts";
import type { AggregateEvent, EventWithDeliveries, Page, RecordVersion } from "../types.ts";

export const recordPanel: PanelFactory = ({
  dom: { byId, h, table },
  format: { ago, clip },
  api: { ApiError },
  refresh,
}): Panel => {
  const LIMIT = 25;
  window.addEventListener("hashchange", () => void refresh());

  /** The record the address names, or null. */
  function target(): { collection: string; id: string } | null {
    const match = /^#\/records\/([A-Za-z0-9._:-]{1,128})\/([A-Za-z0-9._:-]{1,128})$/.exec(location.hash);
    return match ? { collection: match[1] as string, id: match[2] as string } : null;
  }

  /** JSON Pointer → value (as JSON text) of every leaf; arrays count as leaves. */
  function leaves(value: unknown, path = "", out = new Map<string, string>()): Map<string, string> {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const keys = Object.keys(value as object);
      if (keys.length === 0 && path) out.set(path, "{}");
      for (const key of keys) {
        const escaped = key.replaceAll("~", "~0").replaceAll("/", "~1");
        leaves((value as Record<string, unknown>)[key], `${path}/${escaped}`, out);
      }
    } else {
      out.set(path || "/", JSON.stringify(value));
    }
    return out;
  }

  /** What changed from `before` to `after`: one line per added, removed or changed leaf. */
  function diff(after: RecordVersion, before: RecordVersion | undefined): Node {
    if (after.erased) return h("span", { class: "muted" }, "data erased");
    if (after.deleted) return h("span", { class: "pill bad" }, "deleted");
    if (!before) {
      return after.version === 1
        ? h("span", { class: "pill ok" }, "created")
        : h("span", { class: "muted" }, "(older versions on the next page)");
    }
    if (before.deleted) return h("span", { class: "pill ok" }, "re-created");
    if (before.erased) return h("span", { class: "muted" }, "previous version erased");
    const old = leaves(before.data);
    const now = leaves(after.data);
    const lines: Node[] = [];
    for (const [path, value] of now) {
      const was = old.get(path);
      if (was === undefined) lines.push(h("div", { class: "diff add" }, `+ ${path}: ${clip(value, 80)}`));
      else if (was !== value)
        lines.push(h("div", { class: "diff change" }, `~ ${path}: ${clip(was, 40)} → ${clip(value, 40)}`));
    }
    for (const [path, was] of old) {
      if (!now.has(path)) lines.push(h("div", { class: "diff remove" }, `− ${path}: ${clip(was, 80)}`));
    }
    return lines.length ? h("div", {}, ...lines) : h("span", { class: "muted" }, "no change in data");
  }

  function deliveries(event: EventWithDeliveries | undefined): Node {
    if (!event) return h("span", { class: "muted" }, "–");
    if (event.deliveries.length === 0) return h("span", { class: "muted" }, "no endpoint");
    return h(
      "span",
      {},
      ...event.deliveries.map((d) =>
        h(
          "span",
          {
            class: `pill ${d.status === "delivered" ? "ok" : d.status === "dead" ? "bad" : "warn"}`,
            title: `${d.id} → ${d.endpointId}`,
          },
          d.status === "dead" ? `dead: ${d.deadReason ?? "?"}` : d.status,
        ),
      ),
    );
  }

  function render(
    key: { collection: string; id: string },
    history: Page<RecordVersion> | { events: Page<AggregateEvent> } | string,
    events: Map<string, EventWithDeliveries>,
  ): void {
    byId("record").hidden = false;
    byId("record-name").textContent = `${key.collection}/${key.id}`;
    if (typeof history === "string") {
      byId("record-count").textContent = "";
      table("record-history", ["version"], [], history);
      return;
    }
    if ("events" in history) {
      // No record: the aggregate's events were committed without one (an aggregate is any name).
      const { events: found } = history;
      byId("record-count").textContent = found.next
        ? `${found.data.length} oldest events`
        : `${found.data.length} events`;
      table(
        "record-history",
        ["event", "when", "id"],
        found.data.map((e) => [
          h(
            "span",
            {},
            h("span", { class: "type" }, e.type),
            " ",
            h("span", { class: "muted" }, `#${e.sequence}`),
          ),
          ago(e.occurredAt),
          h("code", { class: "muted" }, e.id),
        ]),
        "",
      );
      byId("record-history").prepend(
        h(
          "caption",
          { class: "muted" },
          "No record by this name: these events were committed for the aggregate without a record.",
        ),
      );
      return;
    }
    const versions = history.data;
    byId("record-count").textContent = history.next
      ? `${versions.length} newest versions`
      : `${versions.length} versions`;
    table(
      "record-history",
      ["version", "when", "committed by", "change", "events sent", "delivery"],
      versions.map((v, i) => [
        h("span", { class: "num" }, `v${v.version}`),
        h(
          "span",
          {},
          ago(v.at),
          h("div", {}, h("code", { class: "muted" }, v.commitId ?? "before the ledger")),
        ),
        v.committedBy
          ? h(
              "span",
              {},
              v.committedBy.tokenName ?? v.committedBy.tokenId,
              h("div", {}, h("code", { class: "muted" }, v.committedBy.tokenId)),
              v.proposalId ? h("div", { class: "muted" }, `proposal ${v.proposalId}`) : null,
            )
          : h("span", { class: "muted" }, "–"),
        diff(v, versions[i + 1]),
        h(
          "div",
          {},
          ...v.events.map((e) =>
            h(
              "div",
              {},
              h("span", { class: "type" }, e.type),
              " ",
              h("span", { class: "muted" }, `${e.aggregate} #${e.sequence}`),
            ),
          ),
        ),
        h("div", {}, ...v.events.map((e) => h("div", {}, deliveries(events.get(e.id))))),
      ]),
      "No versions.",
    );
  }

  return {
    async load(get) {
      const key = target();
      if (!key) {
        return () => {
          byId("record").hidden = true;
        };
      }
      const path = `/v1/records/${encodeURIComponent(key.collection)}/${encodeURIComponent(key.id)}/history?limit=${LIMIT}`;
      let history: Page<RecordVersion> | { events: Page<AggregateEvent> } | string;
      try {
        history = await get<Page<RecordVersion>>(path);
      } catch (error) {
        // A record that never existed is a message on its page, not a failed refresh; an aggregate
        // with events but no record (events committed on their own) lists those events.
        if (!(error instanceof ApiError && error.status === 404)) throw error;
        const aggregate = encodeURIComponent(`${key.collection}/${key.id}`);
        const found = await get<Page<AggregateEvent>>(`/v1/events?aggregate=${aggregate}&limit=${LIMIT}`);
        history = found.data.length > 0 ? { events: found } : "This record never existed.";
      }
      const events = new Map<string, EventWithDeliveries>();
      if (typeof history !== "string" && !("events" in history)) {
        const ids = history.data.flatMap((v) => v.events.map((e) => e.id));
        const answers = await Promise.all(ids.map((id) => get<EventWithDeliveries>(`/v1/events/${id}`)));
        for (const answer of answers) events.set(answer.id, answer);
      }
      return () => render(key, history, events);
    },
  };
};
