// The dashboard's script, run in the browser. It is type-checked here and shipped as the text of
// this one function (page.ts inlines `(${dashboardClient})()`), so it must not refer to anything
// outside its own body. It reads the API with the token the user enters, which it keeps in
// sessionStorage only, and builds every node with textContent: nothing from the API is parsed
// as HTML. It never puts the token, or any secret, on the page.
export function dashboardClient(): void {
  const TOKEN_KEY = "outboxd.dashboard.token";
  const REFRESH_MS = 5000;
  const DEAD_LIMIT = 50;
  const ATTEMPT_LIMIT = 25;

  interface Counts {
    pending: number;
    inFlight: number;
    due: number;
    oldestPendingAgeSeconds: number;
    dead: number;
    deadlineExceededTotal: number;
    deliveredLastHour: number;
  }
  interface Stats extends Counts {
    endpoints: ({ id: string } & Counts)[];
  }
  interface Bucket {
    start: string;
    delivered: number;
    latencyP50Ms: number | null;
    latencyMaxMs: number | null;
  }
  interface Delivery {
    id: string;
    endpointId: string;
    attemptCount: number;
    lastStatusCode: number | null;
    lastError: string | null;
    deadReason: string | null;
    type: string;
    aggregate: string;
    sequence: number;
  }
  interface Endpoint {
    id: string;
    url: string;
    description: string | null;
    disabled: boolean;
    disabledReason: string | null;
    lastSuccessAt: string | null;
    lastFailureAt: string | null;
    pending: number;
    dead: number;
  }
  interface Attempt {
    at: string;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responsePrefix: string | null;
    deliveryId: string;
    endpointId: string | null;
    type: string | null;
    aggregate: string | null;
    sequence: number | null;
  }
  interface Page<T> {
    data: T[];
    next: string | null;
  }

  class ApiError extends Error {
    status: number;
    constructor(status: number, message: string) {
      super(message);
      this.status = status;
    }
  }

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

  const token = () => sessionStorage.getItem(TOKEN_KEY);

  async function api<T>(method: string, path: string): Promise<T> {
    const response = await fetch(path, {
      method,
      headers: { authorization: `Bearer ${token() ?? ""}`, accept: "application/json" },
      cache: "no-store",
    });
    const text = await response.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (!response.ok) {
      const detail = (body as { detail?: unknown } | null)?.detail;
      throw new ApiError(response.status, typeof detail === "string" ? detail : `HTTP ${response.status}`);
    }
    return body as T;
  }

  // Formatting
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
  const event = (type: string | null, aggregate: string | null, sequence: number | null): Node =>
    h(
      "span",
      {},
      h("span", { class: "type" }, type ?? "–"),
      " ",
      h("span", { class: "muted" }, aggregate === null ? "" : `${aggregate} #${sequence}`),
    );
  const answer = (statusCode: number | null, error: string | null): Node => {
    if (statusCode !== null) {
      const ok = statusCode >= 200 && statusCode < 300;
      return h("span", { class: `code ${ok ? "ok" : "bad"}`, title: error ?? "" }, String(statusCode));
    }
    return h("span", { class: "code bad", title: error ?? "" }, clip(error ?? "–", 40));
  };

  // Rendering
  function setCard(id: string, value: string, sub: string, level: "" | "warn" | "bad" = ""): void {
    const card = byId(id);
    card.className = `card ${level}`;
    byId(`${id}-value`).textContent = value;
    byId(`${id}-sub`).textContent = sub;
  }

  function renderStats(stats: Stats): void {
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

  function renderChart(buckets: Bucket[]): void {
    const W = 960;
    const H = 220;
    const left = 44;
    const right = 60;
    const top = 14;
    const bottom = 26;
    const plotW = W - left - right;
    const plotH = H - top - bottom;
    const n = Math.max(buckets.length, 1);
    const step = plotW / n;
    const maxCount = Math.max(1, ...buckets.map((b) => b.delivered));
    const maxLatency = Math.max(1, ...buckets.map((b) => b.latencyMaxMs ?? 0));
    const yCount = (v: number) => top + plotH - (v / maxCount) * plotH;
    const yLatency = (v: number) => top + plotH - (v / maxLatency) * plotH;
    const svg = s("svg", {
      viewBox: `0 0 ${W} ${H}`,
      role: "img",
      "aria-label": "Deliveries per minute and their latency over the last hour",
    });
    for (let i = 0; i <= 4; i++) {
      const y = top + (plotH * i) / 4;
      svg.append(s("line", { x1: left, x2: W - right, y1: y, y2: y, stroke: "#e6e9ef" }));
    }
    svg.append(
      s("text", { x: left - 6, y: top + 4, "text-anchor": "end", class: "axis" }, String(maxCount)),
      s("text", { x: left - 6, y: top + plotH, "text-anchor": "end", class: "axis" }, "0"),
      s("text", { x: W - right + 6, y: top + 4, class: "axis" }, ms(maxLatency)),
      s("text", { x: W - right + 6, y: top + plotH, class: "axis" }, "0"),
    );
    buckets.forEach((b, i) => {
      const x = left + i * step;
      const y = yCount(b.delivered);
      const label = `${new Date(b.start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}: ${
        b.delivered
      } delivered, latency p50 ${ms(b.latencyP50Ms)}, max ${ms(b.latencyMaxMs)}`;
      svg.append(
        s(
          "rect",
          {
            x: x + 1,
            y,
            width: Math.max(1, step - 2),
            height: top + plotH - y,
            fill: "#9db4ef",
            class: "bar",
          },
          s("title", {}, label),
        ),
      );
    });
    const line = (pick: (b: Bucket) => number | null, color: string, dash: string, dot: number) => {
      let d = "";
      let penDown = false;
      buckets.forEach((b, i) => {
        const v = pick(b);
        if (v === null) {
          penDown = false;
          return;
        }
        const x = left + i * step + step / 2;
        d += `${penDown ? "L" : "M"}${x.toFixed(1)},${yLatency(v).toFixed(1)} `;
        penDown = true;
        svg.append(s("circle", { cx: x.toFixed(1), cy: yLatency(v).toFixed(1), r: dot, fill: color }));
      });
      if (d)
        svg.append(
          s("path", { d, fill: "none", stroke: color, "stroke-width": 2, "stroke-dasharray": dash }),
        );
    };
    line((b) => b.latencyMaxMs, "#e8a06d", "4 3", 2);
    line((b) => b.latencyP50Ms, "#c2410c", "", 2.5);
    for (const minutesAgo of [60, 45, 30, 15, 0]) {
      const x = left + plotW * (1 - minutesAgo / 60);
      svg.append(
        s(
          "text",
          {
            x,
            y: H - 6,
            "text-anchor": minutesAgo === 60 ? "start" : minutesAgo === 0 ? "end" : "middle",
            class: "axis",
          },
          minutesAgo === 0 ? "now" : `−${minutesAgo} min`,
        ),
      );
    }
    const total = buckets.reduce((sum, b) => sum + b.delivered, 0);
    byId("chart-total").textContent = `${total} delivered in the last hour`;
    byId("chart").replaceChildren(svg);
  }

  function table(id: string, headers: string[], rows: (Node | string)[][], empty: string): void {
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
  }

  function renderDead(dead: Page<Delivery>, total: number): void {
    byId("dead-count").textContent =
      total > dead.data.length ? `${dead.data.length} newest of ${total}` : String(total);
    table(
      "dead-letters",
      ["delivery", "event", "endpoint", "reason", "last answer", "attempts", ""],
      dead.data.map((d) => {
        const button = h("button", { type: "button", class: "replay", "data-delivery": d.id }, "Replay");
        button.addEventListener("click", () => void replay(d.id, button as HTMLButtonElement));
        return [
          h("code", {}, d.id),
          event(d.type, d.aggregate, d.sequence),
          h("code", {}, d.endpointId),
          h("span", { class: "reason" }, d.deadReason ?? "–"),
          answer(d.lastStatusCode, d.lastError),
          String(d.attemptCount),
          button,
        ];
      }),
      "No dead letters.",
    );
  }

  function health(e: Endpoint): Node {
    if (e.disabled)
      return h("span", { class: "pill bad" }, `disabled: ${e.disabledReason ?? "by an operator"}`);
    const success = e.lastSuccessAt ? Date.parse(e.lastSuccessAt) : 0;
    const failure = e.lastFailureAt ? Date.parse(e.lastFailureAt) : 0;
    if (failure > success) return h("span", { class: "pill warn" }, "failing");
    if (success > 0) return h("span", { class: "pill ok" }, "healthy");
    return h("span", { class: "pill" }, "no deliveries yet");
  }

  function renderEndpoints(endpoints: Page<Endpoint>): void {
    byId("endpoint-count").textContent = String(endpoints.data.length) + (endpoints.next ? "+" : "");
    table(
      "endpoints",
      ["endpoint", "url", "health", "last success", "last failure", "pending", "dead"],
      endpoints.data.map((e) => [
        h(
          "span",
          {},
          h("code", {}, e.id),
          e.description ? h("div", { class: "muted" }, e.description) : null,
        ),
        h("span", { class: "url" }, safeUrl(e.url)),
        health(e),
        ago(e.lastSuccessAt),
        ago(e.lastFailureAt),
        String(e.pending),
        h("span", { class: e.dead > 0 ? "num bad" : "num" }, String(e.dead)),
      ]),
      "No endpoints yet: POST /v1/endpoints.",
    );
  }

  function renderAttempts(attempts: Page<Attempt>): void {
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

  // Flow
  let timer: ReturnType<typeof setTimeout> | undefined;
  let refreshing = false;
  let again = false;

  function setStatus(text: string, level: "" | "bad" = ""): void {
    const status = byId("status");
    status.textContent = text;
    status.className = level;
  }

  function toast(text: string, level: "ok" | "bad"): void {
    const node = byId("toast");
    node.textContent = text;
    node.className = `toast ${level}`;
    node.hidden = false;
    setTimeout(() => {
      if (node.textContent === text) node.hidden = true;
    }, 6000);
  }

  function showLogin(message: string): void {
    clearTimeout(timer);
    byId("app").hidden = true;
    byId("login").hidden = false;
    byId("logout").hidden = true;
    byId("login-message").textContent = message;
    setStatus("");
  }

  /** One refresh at a time; a call during one runs again right after it (e.g. after a replay). */
  async function refresh(): Promise<void> {
    const current = token();
    if (!current) return;
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = true;
    clearTimeout(timer);
    try {
      const [stats, history, dead, endpoints, attempts] = await Promise.all([
        api<Stats>("GET", "/v1/stats"),
        api<{ buckets: Bucket[] }>("GET", "/v1/stats/history"),
        api<Page<Delivery>>("GET", `/v1/deliveries?status=dead&limit=${DEAD_LIMIT}`),
        api<Page<Endpoint>>("GET", "/v1/endpoints?limit=100"),
        api<Page<Attempt>>("GET", `/v1/attempts?limit=${ATTEMPT_LIMIT}`),
      ]);
      // The token was forgotten or replaced meanwhile: these answers belong to the old one.
      if (token() !== current) return;
      byId("login").hidden = true;
      byId("logout").hidden = false;
      byId("app").hidden = false;
      renderStats(stats);
      renderChart(history.buckets);
      renderDead(dead, stats.dead);
      renderEndpoints(endpoints);
      renderAttempts(attempts);
      setStatus(`updated ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (token() !== current) return;
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        sessionStorage.removeItem(TOKEN_KEY);
        showLogin(
          error.status === 401
            ? "That token was refused. Enter an outboxd API token."
            : "That token lacks the read scope. Enter a token with read (or admin) scope.",
        );
        return;
      }
      setStatus(`could not refresh: ${error instanceof Error ? error.message : String(error)}`, "bad");
    } finally {
      refreshing = false;
      if (again) {
        again = false;
        setTimeout(() => void refresh(), 0);
      } else if (token()) {
        // Polls only while the tab is visible; visibilitychange resumes it.
        timer = setTimeout(() => {
          if (!document.hidden) void refresh();
        }, REFRESH_MS);
      }
    }
  }

  async function replay(id: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    button.textContent = "Replaying…";
    try {
      await api("POST", `/v1/deliveries/${encodeURIComponent(id)}/replay`);
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

  byId("login").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = byId<HTMLInputElement>("token");
    const value = input.value.trim();
    input.value = "";
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    byId("login-message").textContent = "";
    void refresh();
  });
  byId("logout").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin("Token forgotten.");
  });
  byId("refresh").addEventListener("click", () => void refresh());
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") void refresh();
  });

  if (token()) void refresh();
  else showLogin("");
}
