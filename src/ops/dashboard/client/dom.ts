// Building nodes. Every node is built with textContent (never innerHTML): nothing from the API is
// parsed as HTML.
export function domKit() {
  const byId = <T extends HTMLElement>(id: string): T => {
    const node = document.getElementById(id);
    if (!node) throw new Error(`the page has no #${id}`);
    return node as T;
  };
  type Kid = Node | string | number | null | undefined | false;
  const h = (tag: string, attrs: Record<string, string> = {}, ...kids: Kid[]): HTMLElement => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    for (const kid of kids) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(typeof kid === "number" ? String(kid) : kid);
    }
    return node;
  };
  const SVG = "http://www.w3.org/2000/svg";
  const s = (
    tag: string,
    attrs: Record<string, string | number> = {},
    ...kids: (Node | string)[]
  ): SVGElement => {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    node.append(...kids);
    return node;
  };
  /** Fills table #id: a header row, then the rows, or one row saying `empty`. */
  const table = (id: string, headers: string[], rows: (Node | string)[][], empty: string): void => {
    const body = rows.map((cells) => h("tr", {}, ...cells.map((c) => h("td", {}, c))));
    byId(id).replaceChildren(
      h("thead", {}, h("tr", {}, ...headers.map((x) => h("th", {}, x)))),
      h(
        "tbody",
        {},
        ...(body.length
          ? body
          : [h("tr", {}, h("td", { colspan: String(headers.length), class: "empty" }, empty))]),
      ),
    );
  };
  return { byId, h, s, table };
}
export type Dom = ReturnType<typeof domKit>;
