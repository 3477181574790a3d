// The dashboard's flow: the login form, the refresh loop (every 5 s while the tab is visible)
// and what a refused token does (back to the login form).
import type { Api } from "./api.ts";
import type { Dom } from "./dom.ts";
import type { Format } from "./format.ts";
import type { Kit, PanelFactory } from "./panel.ts";
import type { Ui } from "./ui.ts";

export function dashboardApp(dom: Dom, format: Format, api: Api, ui: Ui, factories: PanelFactory[]): void {
  const REFRESH_MS = 5000;
  const { byId } = dom;
  const { ApiError, token, setToken, forgetToken, onceEach } = api;
  const { setStatus, showLogin, showApp } = ui;

  let timer: ReturnType<typeof setTimeout> | undefined;
  let refreshing = false;
  let again = false;

  const kit: Kit = { dom, format, api, ui, refresh };
  const panels = factories.map((make) => make(kit));

  function login(message: string): void {
    clearTimeout(timer);
    showLogin(message);
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
      const get = onceEach();
      // Settle every load before deciding: with Promise.all a refused token would show the
      // login form while the other requests are still in flight (their 401s land later).
      const settled = await Promise.allSettled(panels.map((panel) => panel.load(get)));
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
      if (failed) throw failed.reason;
      const renders = settled.map((s) => (s as PromiseFulfilledResult<() => void>).value);
      // The token was forgotten or replaced meanwhile: these answers belong to the old one.
      if (token() !== current) return;
      showApp();
      for (const render of renders) render();
      setStatus(`updated ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (token() !== current) return;
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        forgetToken();
        login(
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

  byId("login").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = byId<HTMLInputElement>("token");
    const value = input.value.trim();
    input.value = "";
    if (!value) return;
    setToken(value);
    byId("login-message").textContent = "";
    void refresh();
  });
  byId("logout").addEventListener("click", () => {
    forgetToken();
    login("Token forgotten.");
  });
  byId("refresh").addEventListener("click", () => void refresh());
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") void refresh();
  });

  if (token()) void refresh();
  else login("");
}
