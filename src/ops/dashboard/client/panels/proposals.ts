// Pending proposals (DESIGN §10): what an agent wants to change, for a person to approve or
// reject. Each card shows the summary, who proposed it, the diff of every record (its data now
// against the proposed data, field by field), the events that would be sent, and a reason field
// with Approve / Reject (a token with the approve scope, not the proposer's). Cards already on
// the page are kept as they are on refresh, so a reason being typed is not wiped.
import type { Panel, PanelFactory } from "../panel.ts";
import type { Page, Proposal } from "../types.ts";

export const proposalsPanel: PanelFactory = ({
  dom: { byId, h },
  format: { ago, clip },
  api: { ApiError, request },
  ui: { toast },
  refresh,
}): Panel => {
  const LIMIT = 20;
  const json = (value: unknown) => (value === undefined ? "–" : JSON.stringify(value));

  /** One row per field that the proposal sets, changes or removes. */
  function diff(proposal: Proposal): HTMLElement {
    const rows: Node[] = [];
    for (const write of proposal.commit.records ?? []) {
      const now = proposal.current.find((c) => c.collection === write.collection && c.id === write.id);
      const before = now?.data ?? {};
      const after = write.delete ? {} : (write.data ?? {});
      const head = `${write.collection}/${write.id}`;
      const version = now && now.version > 0 ? `version ${now.version}` : "new";
      const stale =
        now !== undefined && write.expectedVersion != null && write.expectedVersion !== now.version;
      rows.push(
        h(
          "tr",
          { class: "record" },
          h(
            "td",
            { colspan: "3" },
            h("strong", {}, head),
            " ",
            h("span", { class: "muted" }, version),
            // An existing record's history is a click away (its page, panels/record.ts).
            now && now.version > 0
              ? h("a", { class: "muted record-link", href: `#/records/${head}` }, " history")
              : null,
            write.delete ? h("span", { class: "pill bad" }, "delete") : null,
            stale
              ? h("span", { class: "pill warn" }, `changed since: expected version ${write.expectedVersion}`)
              : null,
          ),
        ),
      );
      const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
      for (const key of keys) {
        const was = json(before[key]);
        const will = json((after as Record<string, unknown>)[key]);
        const changed = was !== will;
        rows.push(
          h(
            "tr",
            { class: changed ? "changed" : "same", "data-field": `${head}.${key}` },
            h("td", {}, h("code", {}, key)),
            h("td", { class: changed ? "was" : "" }, h("code", {}, clip(was, 120))),
            h("td", { class: changed ? "will" : "" }, h("code", {}, clip(will, 120))),
          ),
        );
      }
    }
    return h(
      "table",
      { class: "diff" },
      h("thead", {}, h("tr", {}, h("th", {}, "field"), h("th", {}, "now"), h("th", {}, "proposed"))),
      h(
        "tbody",
        {},
        ...(rows.length
          ? rows
          : [h("tr", {}, h("td", { colspan: "3", class: "empty" }, "No record changes."))]),
      ),
    );
  }

  function events(proposal: Proposal): HTMLElement {
    const list = proposal.commit.events ?? [];
    if (list.length === 0) return h("p", { class: "muted" }, "No events.");
    return h(
      "ul",
      { class: "events" },
      ...list.map((e) =>
        h(
          "li",
          {},
          h("span", { class: "type" }, e.type),
          " ",
          h("span", { class: "muted" }, e.aggregate ?? "(the record's aggregate)"),
          " ",
          h("code", {}, clip(JSON.stringify(e.payload ?? {}), 200)),
        ),
      ),
    );
  }

  async function decide(
    proposal: Proposal,
    decision: "approve" | "reject",
    card: HTMLElement,
  ): Promise<void> {
    const buttons = [...card.querySelectorAll("button")] as HTMLButtonElement[];
    for (const b of buttons) b.disabled = true;
    const reason = (card.querySelector("input.reason") as HTMLInputElement).value.trim();
    try {
      await request(
        "POST",
        `/v1/proposals/${encodeURIComponent(proposal.id)}/${decision}`,
        reason ? { reason } : {},
      );
      toast(`${decision === "approve" ? "Approved" : "Rejected"}: ${clip(proposal.summary, 80)}`, "ok");
      card.remove();
    } catch (error) {
      const message =
        error instanceof ApiError && error.status === 403
          ? `Could not ${decision}: ${error.message} (a token with the approve scope, not the proposer's)`
          : `Could not ${decision}: ${error instanceof Error ? error.message : String(error)}`;
      toast(message, "bad");
      for (const b of buttons) b.disabled = false;
    }
    await refresh();
  }

  function card(proposal: Proposal): HTMLElement {
    const node = h(
      "article",
      { class: "proposal", "data-proposal": proposal.id },
      h("h3", {}, proposal.summary),
      h(
        "p",
        { class: "muted" },
        "proposed by ",
        h("strong", {}, proposal.proposedBy.tokenName),
        " ",
        ago(proposal.createdAt),
        " · expires ",
        h("time", { datetime: proposal.expiresAt, title: proposal.expiresAt }, proposal.expiresAt),
      ),
      diff(proposal),
      h("h4", {}, "Events that will be sent"),
      events(proposal),
    );
    const reason = h("input", {
      class: "reason",
      type: "text",
      placeholder: "reason (optional)",
      "aria-label": "reason",
      maxlength: "2000",
    });
    const approve = h("button", { type: "button", class: "primary approve" }, "Approve");
    const reject = h("button", { type: "button", class: "reject" }, "Reject");
    approve.addEventListener("click", () => void decide(proposal, "approve", node));
    reject.addEventListener("click", () => void decide(proposal, "reject", node));
    node.append(h("div", { class: "decide" }, reason, approve, reject));
    return node;
  }

  function render(pending: Proposal[]): void {
    byId("proposal-count").textContent = String(pending.length);
    const list = byId("proposals");
    const shown = new Map<string, Element>();
    for (const child of [...list.children]) {
      const id = child.getAttribute("data-proposal");
      if (id && pending.some((p) => p.id === id)) shown.set(id, child);
      else child.remove();
    }
    const nodes = pending.map((p) => shown.get(p.id) ?? card(p));
    list.replaceChildren(
      ...(nodes.length ? nodes : [h("p", { class: "muted empty" }, "No proposals waiting.")]),
    );
  }

  return {
    async load(get) {
      const page = await get<Page<{ id: string }>>(`/v1/proposals?status=pending&limit=${LIMIT}`);
      const pending = await Promise.all(
        page.data.map((p) => get<Proposal>(`/v1/proposals/${encodeURIComponent(p.id)}`)),
      );
      return () => render(pending);
    },
  };
};
