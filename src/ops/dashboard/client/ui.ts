// The page's chrome around the panels: the status line, the toast, the login form.
import type { Dom } from "./dom.ts";

export function uiKit({ byId }: Dom) {
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

  /** Shows the login form (with a message) instead of the panels. */
  function showLogin(message: string): void {
    byId("app").hidden = true;
    byId("login").hidden = false;
    byId("logout").hidden = true;
    byId("login-message").textContent = message;
    setStatus("");
  }

  function showApp(): void {
    byId("login").hidden = true;
    byId("logout").hidden = false;
    byId("app").hidden = false;
  }

  return { setStatus, toast, showLogin, showApp };
}
export type Ui = ReturnType<typeof uiKit>;
