// How values read on the page: ages, durations, clipped text, URLs without secrets, an event's
// name and a receiver's answer.
import type { Dom } from "./dom.ts";

export function formatKit({ h }: Dom) {
  const age = (seconds: number): string => {
    const s = Math.floor(seconds);
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} m ${s % 60} s`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} m`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  };
  const ago = (iso: string | null): Node => {
    if (!iso) return h("span", { class: "muted" }, "never");
    const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    return h("time", { datetime: iso, title: iso }, `${age(seconds)} ago`);
  };
  const ms = (value: number | null): string =>
    value === null
      ? "–"
      : value < 1000
        ? `${value} ms`
        : `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
  const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
  /** An endpoint URL without credentials or query values: those may carry secrets. */
  const safeUrl = (raw: string): string => {
    try {
      const url = new URL(raw);
      return `${url.protocol}//${url.host}${url.pathname}${url.search ? "?…" : ""}`;
    } catch {
      return "(invalid URL)";
    }
  };
  /** A default aggregate is "<collection>/<id>": it links to that record's page (its history). */
  const RECORD = /^[A-Za-z0-9._:-]{1,128}\/[A-Za-z0-9._:-]{1,128}$/;
  const event = (type: string | null, aggregate: string | null, sequence: number | null): Node =>
    h(
      "span",
      {},
      h("span", { class: "type" }, type ?? "–"),
      " ",
      aggregate !== null && RECORD.test(aggregate)
        ? h(
            "a",
            { class: "muted record-link", href: `#/records/${aggregate}`, title: "the record's history" },
            `${aggregate} #${sequence}`,
          )
        : h("span", { class: "muted" }, aggregate === null ? "" : `${aggregate} #${sequence}`),
    );
  const answer = (statusCode: number | null, error: string | null): Node => {
    if (statusCode !== null) {
      const ok = statusCode >= 200 && statusCode < 300;
      return h("span", { class: `code ${ok ? "ok" : "bad"}`, title: error ?? "" }, String(statusCode));
    }
    return h("span", { class: "code bad", title: error ?? "" }, clip(error ?? "–", 40));
  };
  /**
   * An endpoint as people know it: its description, else its URL's host, else "pull endpoint"
   * ("deleted endpoint" when it is gone); its id on hover.
   */
  const endpointName = (
    id: string | null,
    endpoint: { kind: string; url: string | null; description: string | null } | undefined,
  ): Node => {
    if (id === null) return h("span", { class: "muted" }, "–");
    let name = "deleted endpoint";
    if (endpoint?.description) name = clip(endpoint.description, 40);
    else if (endpoint?.url) {
      try {
        name = new URL(endpoint.url).host;
      } catch {
        name = "(invalid URL)";
      }
    } else if (endpoint) name = "pull endpoint";
    return h("span", { class: "endpoint", title: id }, name);
  };
  return { age, ago, ms, clip, safeUrl, event, answer, endpointName };
}
export type Format = ReturnType<typeof formatKit>;
