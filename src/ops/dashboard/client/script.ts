// The dashboard's script, run in the browser, assembled from the parts in this folder. Each part
// is a function that is type-checked here and shipped as its source text, so it must not refer to
// anything outside its own body but its arguments (type imports are fine: they are erased). The
// parts are wired together in the browser in the order below, inside one closure.
import { apiKit } from "./api.ts";
import { dashboardApp } from "./app.ts";
import { domKit } from "./dom.ts";
import { formatKit } from "./format.ts";
import { PANELS } from "./panels/index.ts";
import { uiKit } from "./ui.ts";

const source = (part: (...args: never[]) => unknown) => `(${part.toString()})`;

export const DASHBOARD_SCRIPT = `(() => {
const dom = ${source(domKit)}();
const format = ${source(formatKit)}(dom);
const api = ${source(apiKit)}();
const ui = ${source(uiKit)}(dom);
${source(dashboardApp)}(dom, format, api, ui, [
${PANELS.map(source).join(",\n")}
]);
})();`;
