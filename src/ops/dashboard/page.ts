// The dashboard page (DESIGN §3 `GET /`): static HTML, one inline stylesheet and one inline
// script (client/script.ts), nothing from elsewhere, no build step. The page holds no data: its script
// reads the API with the token the user enters. A Content-Security-Policy pins the inline script
// and stylesheet by hash and lets the page talk to this origin only.
import { createHash } from "node:crypto";
import { DASHBOARD_SCRIPT } from "./client/script.ts";

const STYLE = `
:root { color-scheme: light; --fg: #1d2330; --muted: #6a7282; --line: #e3e6ec; --bg: #f5f6f8; --accent: #2f5bd3;
  --ok: #1f7a45; --warn: #a15c00; --bad: #b42323; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif;
  color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 16px; padding: 12px 24px; background: #fff;
  border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header h1 { font-size: 18px; margin: 0; } header h1 span { color: var(--muted); font-weight: 400; }
header nav { margin-left: auto; display: flex; gap: 12px; align-items: center; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
#status { color: var(--muted); font-size: 12px; } #status.bad { color: var(--bad); }
button { font: inherit; border: 1px solid #c9ced8; background: #fff; border-radius: 6px; padding: 4px 12px; cursor: pointer; }
button:hover:not(:disabled) { border-color: var(--accent); color: var(--accent); }
button:disabled { opacity: .6; cursor: default; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button.primary:hover { color: #fff; filter: brightness(1.1); }
main { padding: 20px 24px 48px; max-width: 1280px; margin: 0 auto; }
#login { max-width: 460px; margin: 64px auto; background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 24px; }
#login h2 { margin-top: 0; font-size: 17px; }
#login p { color: var(--muted); }
#login .row { display: flex; gap: 8px; }
#login input { flex: 1; font: inherit; padding: 6px 10px; border: 1px solid #c9ced8; border-radius: 6px; }
#login-message { color: var(--bad); min-height: 1.4em; margin-bottom: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 12px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; border-top: 3px solid #cfd6e4; }
.card.warn { border-top-color: #e0a030; } .card.bad { border-top-color: var(--bad); }
.card h3 { margin: 0; font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); font-weight: 600; }
.card .value { font-size: 30px; font-weight: 650; margin: 4px 0 2px; font-variant-numeric: tabular-nums; }
.card.bad .value { color: var(--bad); } .card.warn .value { color: var(--warn); }
.card .sub { color: var(--muted); font-size: 12px; }
section.panel { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; margin-top: 16px; overflow-x: auto; }
#record { margin: 0 0 16px; }
#record caption { text-align: left; caption-side: top; padding: 0 8px 8px; }
#attempts td:last-child { white-space: normal; overflow-wrap: anywhere; min-width: 14em; }
.endpoint { font-weight: 500; }
section.panel h2 { font-size: 15px; margin: 0 0 10px; display: flex; gap: 10px; align-items: baseline; }
section.panel h2 .count { font-size: 12px; color: var(--muted); font-weight: 400; }
.legend { margin-left: auto; font-size: 12px; color: var(--muted); font-weight: 400; display: flex; gap: 14px; }
.key { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }
.key.bars { height: 10px; background: #9db4ef; } .key.p50 { background: #c2410c; } .key.max { background: #e8a06d; }
#chart svg { width: 100%; height: auto; display: block; }
#chart .axis { font-size: 11px; fill: var(--muted); }
#chart .bar:hover { fill: #6f8fe6; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.empty { color: var(--muted); text-align: center; padding: 14px; }
code { font: 12px ui-monospace, "SFMono-Regular", Menlo, "Liberation Mono", monospace; }
.muted { color: var(--muted); font-size: 12px; }
.type { font-weight: 600; }
.url { font: 12px ui-monospace, Menlo, "Liberation Mono", monospace; }
.endpoint-actions { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 4px; max-width: 15em; white-space: normal; }
.endpoint-actions input { width: 13em; font: 11px ui-monospace, Menlo, monospace; }
.disabled-why .detail { white-space: normal; max-width: 15em; }
.controls-summary { font-size: 12px; } details.controls textarea { width: 22em; font: 11px ui-monospace, Menlo, monospace; }
.code { font: 600 12px ui-monospace, Menlo, "Liberation Mono", monospace; padding: 1px 6px; border-radius: 4px; }
.code.ok { background: #e1f3e8; color: var(--ok); } .code.bad { background: #fbe7e7; color: var(--bad); }
.reason { color: var(--bad); font-weight: 600; }
.pill { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #eef0f4; color: var(--muted); }
.pill.ok { background: #e1f3e8; color: var(--ok); } .pill.warn { background: #fdf0dc; color: var(--warn); }
.pill.bad { background: #fbe7e7; color: var(--bad); }
.num.bad { color: var(--bad); font-weight: 600; }
.prefix { color: var(--muted); }
.diff { font: 12px ui-monospace, Menlo, "Liberation Mono", monospace; white-space: pre; }
.diff.add { color: var(--ok); } .diff.remove { color: var(--bad); } .diff.change { color: var(--warn); }
.toast { position: fixed; right: 20px; bottom: 20px; padding: 10px 14px; border-radius: 8px; color: #fff; box-shadow: 0 4px 14px rgba(0,0,0,.15); }
.toast.ok { background: var(--ok); } .toast.bad { background: var(--bad); }
.proposal { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; margin-top: 10px; }
.proposal h3 { margin: 0 0 2px; font-size: 15px; white-space: normal; }
.proposal h4 { margin: 10px 0 4px; font-size: 13px; }
table.diff td.was code { background: #fbe7e7; } table.diff td.will code { background: #e1f3e8; }
table.diff tr.record td { background: #f7f8fa; }
.events { margin: 0; padding-left: 18px; } .events li { margin: 2px 0; }
.proposal .value { white-space: pre-wrap; overflow-wrap: anywhere; }
.proposal .key { white-space: pre-wrap; overflow-wrap: break-word; }
.proposal .escape { background: #fff1c2; color: #7a4b00; border: 1px solid #e6c66a; border-radius: 3px; padding: 0 2px; }
.proposal dl.event { display: grid; grid-template-columns: max-content 1fr; gap: 1px 10px; margin: 4px 0 8px; }
.proposal dl.event dt { color: var(--muted); } .proposal dl.event dd { margin: 0; min-width: 0; }
.decide { display: flex; gap: 8px; margin-top: 10px; }
.decide input { flex: 1; font: inherit; padding: 4px 10px; border: 1px solid #c9ced8; border-radius: 6px; }
[hidden] { display: none !important; }
`;

const SCRIPT = DASHBOARD_SCRIPT;
if (SCRIPT.includes("</"))
  throw new Error("the dashboard script must not contain </ (it is inlined in HTML)");

const card = (id: string, title: string) =>
  `<div class="card" id="${id}"><h3>${title}</h3><div class="value" id="${id}-value">–</div><div class="sub" id="${id}-sub"></div></div>`;

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>outboxd dashboard</title>
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1>outboxd <span>dashboard</span></h1>
  <span id="status" role="status"></span>
  <nav>
    <button type="button" id="refresh">Refresh</button>
    <button type="button" id="logout" hidden>Forget token</button>
    <a href="/docs">API docs</a>
  </nav>
</header>
<main>
  <form id="login" hidden autocomplete="off">
    <h2>Connect</h2>
    <p>Enter an outboxd API token with the <code>read</code> scope (<code>admin</code> to replay dead letters).
    It stays in this tab's session storage and is sent only to this server.</p>
    <div class="row">
      <input id="token" type="password" placeholder="otk_…" aria-label="API token" autocomplete="off" spellcheck="false">
      <button class="primary" type="submit" id="connect">Connect</button>
    </div>
    <p id="login-message" role="alert"></p>
  </form>
  <div id="app" hidden>
    <section class="panel" id="record" hidden>
      <h2>Record <code id="record-name"></code> <span class="count" id="record-count"></span>
        <span class="legend"><a href="#">close</a></span></h2>
      <table id="record-history"></table>
    </section>
    <div class="cards">
      ${card("stat-pending", "Pending")}
      ${card("stat-oldest", "Oldest pending")}
      ${card("stat-deadline", "Deadline exceeded")}
      ${card("stat-dead", "Dead letters")}
      ${card("stat-delivered", "Delivered")}
    </div>
    <section class="panel">
      <h2>Last hour <span class="count" id="chart-total"></span>
        <span class="legend"><span><i class="key bars"></i>delivered per minute</span>
        <span><i class="key p50"></i>latency p50</span><span><i class="key max"></i>latency max</span></span></h2>
      <div id="chart"></div>
    </section>
    <section class="panel" id="proposals-panel">
      <h2>Proposals waiting for approval <span class="count" id="proposal-count"></span></h2>
      <div id="proposals"></div>
    </section>
    <section class="panel">
      <h2>Dead letters <span class="count" id="dead-count"></span></h2>
      <table id="dead-letters"></table>
    </section>
    <section class="panel">
      <h2>Endpoints <span class="count" id="endpoint-count"></span></h2>
      <table id="endpoints"></table>
    </section>
    <section class="panel">
      <h2>Recent attempts <span class="count">newest first</span></h2>
      <table id="attempts"></table>
    </section>
  </div>
  <div id="toast" class="toast" role="status" hidden></div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

export const DASHBOARD_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "content-security-policy": [
    "default-src 'none'",
    `script-src ${sha256(SCRIPT)}`,
    `style-src ${sha256(STYLE)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
};

export function dashboardPage(): string {
  return HTML;
}
