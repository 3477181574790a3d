// What a dashboard panel is. Each refresh calls every panel's `load` together; when all have
// answered (and the token is still the one they were read with), it calls the render functions
// they returned, in the order of PANELS (panels/index.ts). A panel reads through `get`, which
// shares one request between panels reading the same path.
import type { Api, Get } from "./api.ts";
import type { Dom } from "./dom.ts";
import type { Format } from "./format.ts";
import type { Ui } from "./ui.ts";

export interface Kit {
  dom: Dom;
  format: Format;
  api: Api;
  ui: Ui;
  /** Refreshes every panel now (one refresh at a time; a call during one runs again after it). */
  refresh: () => Promise<void>;
}

export interface Panel {
  load(get: Get): Promise<() => void>;
}

/** Runs in the browser: must not refer to anything outside its own body but its argument. */
export type PanelFactory = (kit: Kit) => Panel;
