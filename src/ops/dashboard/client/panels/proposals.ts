// Pending proposals (DESIGN §10): what an agent wants to change, for a person to approve or
// reject. Each card shows the summary, who proposed it, the diff of every record (its data now
// against the proposed data, field by field), every field of every event that would be sent, and
// a reason field with Approve / Reject (a token with the approve scope, not the proposer's).
// Cards already on the page are kept as they are on refresh, so a reason being typed is not wiped.
// What the approver sees is what is applied (DESIGN §10): every value in full (wrapped, never
// cut), and characters that render as nothing or reorder the text around them (bidirectional
// controls such as U+202E, zero-width and other format or control characters) as escapes.
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
  // Invisible or reordering: control (Cc), format (Cf: bidi controls, zero-width characters),
  // lone surrogates, line and paragraph separators, spaces other than U+0020, and the other
  // default-ignorable characters (fillers, variation selectors).
  const HIDDEN =
    // biome-ignore lint/suspicious/noMisleadingCharacterClass: each combining character is matched alone on purpose
    /(?! )[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;
  const codeOf = (ch: string) => (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  const escapeOf = (code: string) => (code.length > 4 ? `\\u{${code}}` : `\\u${code}`);
  /** `text` in a `tag`, each hidden character as a marked escape (`\u202E`) instead of itself. */
  function shown(text: string, tag = "span", attrs: Record<string, string> = {}): HTMLElement {
    const node = h(tag, attrs);
    let last = 0;
    for (const match of text.matchAll(HIDDEN)) {
      const at = match.index ?? 0;
      const code = codeOf(match[0]);
      node.append(text.slice(last, at), h("span", { class: "escape", title: `U+${code}` }, escapeOf(code)));
      last = at + match[0].length;
    }
    node.append(text.slice(last));
    return node;
  }
  /** A value in full: wrapped, never cut. */
  const value = (text: string) => shown(text, "code", { class: "value" });

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
            h("td", {}, shown(key, "code", { class: "key" })),
            h("td", { class: changed ? "was" : "" }, value(was)),
            h("td", { class: changed ? "will" : "" }, value(will)),
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

  /** Every field of an event, in this order, then any other it has; what an absent one means. */
  const EVENT_FIELDS: [string, string][] = [
    ["type", "–"],
    ["aggregate", "(the record's aggregate)"],
    ["id", "(a new id, made at approval)"],
    ["endpoints", "(every endpoint subscribed to the type)"],
    ["deliverAfter", "(at once)"],
    ["deliverBy", "(the default deadline)"],
    ["deliverWithin", "(the default deadline)"],
    ["payload", "{}"],
  ];

  function events(proposal: Proposal): HTMLElement {
    const list = proposal.commit.events ?? [];
    if (list.length === 0) return h("p", { class: "muted" }, "No events.");
    return h(
      "ul",
      { class: "events" },
      ...list.map((e, i) => {
        const fields: Record<string, unknown> = { ...e };
        const names = [
          ...EVENT_FIELDS.map(([name]) => name),
          ...Object.keys(fields).filter((k) => !EVENT_FIELDS.some(([name]) => name === k)),
        ];
        return h(
          "li",
          { "data-event": String(i) },
          h(
            "dl",
            { class: "event" },
            ...names.flatMap((name) => {
              const given = fields[name];
              const absent = EVENT_FIELDS.find(([n]) => n === name)?.[1] ?? "–";
              return [
                h("dt", {}, name),
                h(
                  "dd",
                  { "data-field": name },
                  given == null ? h("span", { class: "muted" }, absent) : value(JSON.stringify(given)),
                ),
              ];
            }),
          ),
        );
      }),
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
      shown(proposal.summary, "h3"),
      h(
        "p",
        { class: "muted" },
        "proposed by ",
        shown(proposal.proposedBy.tokenName, "strong"),
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
