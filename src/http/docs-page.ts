// GET /docs: the OpenAPI document rendered on the server as one self-contained HTML page (no
// script, no stylesheet or font from elsewhere), so it works on a private network and offline.
// hono/html's `html` escapes every interpolated string (plain TS rather than JSX, so Deno needs
// no JSX configuration).
import { html, raw } from "hono/html";

type Json = Record<string, unknown>;
type Fragment = ReturnType<typeof html> | string | null;
type Schema = Json & {
  $ref?: string;
  type?: string | string[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
};

interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  "x-outboxd-scope": string[];
  "x-outboxd-extension"?: boolean;
  parameters?: { name: string; in: string; required: boolean; description?: string; schema: Schema }[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<
    string,
    { $ref?: string; description?: string; content?: Record<string, { schema?: Schema; example?: unknown }> }
  >;
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);

/** `code` spans and blank-line paragraphs: all the markup the descriptions use. */
function text(value: string | undefined): Fragment {
  if (!value) return null;
  return html`${value
    .split(/\n\n+/)
    .map(
      (para) =>
        html`<p>${para.split("`").map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}</p>`,
    )}`;
}

function typeOf(schema: Schema | undefined): Fragment {
  if (!schema || Object.keys(schema).length === 0) return html`<span class="t">any</span>`;
  if (schema.$ref) {
    const name = refName(schema.$ref);
    return html`<a href="#schema-${name}">${name}</a>`;
  }
  if (schema.anyOf) return html`${schema.anyOf.map((s, i) => html`${i > 0 ? " | " : ""}${typeOf(s)}`)}`;
  if ("const" in schema) return html`<code>${JSON.stringify(schema.const)}</code>`;
  if (schema.enum)
    return html`<span class="t">${schema.enum.map((e) => JSON.stringify(e)).join(" | ")}</span>`;
  if (schema.type === "array") {
    const items = schema.items;
    const union = items !== undefined && (items.enum !== undefined || items.anyOf !== undefined);
    return union ? html`(${typeOf(items)})[]` : html`${typeOf(items)}[]`;
  }
  return html`<span class="t">${[schema.type ?? "any"].flat().join(" | ")}</span>`;
}

const CONSTRAINTS: [string, (v: unknown) => string][] = [
  ["format", (v) => `format ${v}`],
  ["pattern", (v) => `pattern ${v}`],
  ["minLength", (v) => `length ≥ ${v}`],
  ["maxLength", (v) => `length ≤ ${v}`],
  ["minimum", (v) => `≥ ${v}`],
  ["maximum", (v) => `≤ ${v}`],
  ["minItems", (v) => `≥ ${v} items`],
  ["maxItems", (v) => `≤ ${v} items`],
];

function constraints(schema: Schema | undefined): string[] {
  if (!schema) return [];
  const own = CONSTRAINTS.filter(([key]) => key in schema).map(([key, show]) => show(schema[key]));
  return [...own, ...(schema.anyOf ?? []).flatMap(constraints), ...constraints(schema.items)];
}

function properties(schema: Schema): Fragment {
  const entries = Object.entries(schema.properties ?? {});
  if (entries.length === 0) return null;
  return html`<table>
    <thead><tr><th>field</th><th>type</th><th>rules</th></tr></thead>
    <tbody>${entries.map(
      ([name, prop]) => html`<tr>
        <td><code>${name}</code>${schema.required?.includes(name) ? html`<span class="req">required</span>` : null}</td>
        <td>${typeOf(prop)}</td>
        <td class="rules">${constraints(prop).join(", ")}</td>
      </tr>`,
    )}</tbody>
  </table>`;
}

const example = (value: unknown): Fragment =>
  value === undefined ? null : html`<pre>${JSON.stringify(value, null, 2)}</pre>`;

function parameters(op: Operation): Fragment {
  if (!op.parameters?.length) return null;
  return html`<h4>Parameters</h4>
    <table>
      <thead><tr><th>name</th><th>in</th><th>type</th><th>description</th></tr></thead>
      <tbody>${op.parameters.map(
        (p) => html`<tr>
          <td><code>${p.name}</code>${p.required ? html`<span class="req">required</span>` : null}</td>
          <td>${p.in}</td>
          <td>${typeOf(p.schema)} <span class="rules">${constraints(p.schema).join(", ")}</span></td>
          <td>${text(p.description)}</td>
        </tr>`,
      )}</tbody>
    </table>`;
}

/** The type of a JSON answer: its named schema, or the items of a page or list. */
function answerType(schema: Schema | undefined): Fragment {
  if (!schema || schema.type === "string") return null;
  const items = schema.properties?.data?.items ?? schema.items;
  if (!schema.$ref && items?.$ref)
    return html` <span class="t">${schema.items ? "" : "page of "}${typeOf(items)}${schema.items ? "[]" : ""}</span>`;
  return html` <span class="t">${typeOf(schema)}</span>`;
}

function operation(method: string, path: string, op: Operation): Fragment {
  const scopes = op["x-outboxd-scope"];
  const body = op.requestBody?.content["application/json"];
  return html`<section class="op" id="${op.operationId}">
    <h3>
      <span class="m ${method}">${method.toUpperCase()}</span> <code class="path">${path}</code>
      ${scopes.length === 0 ? html`<span class="badge public">public</span>` : scopes.map((s) => html`<span class="badge">${s}</span>`)}
      ${op["x-outboxd-extension"] ? html`<span class="badge ext">outboxd extension</span>` : null}
    </h3>
    <p class="summary">${op.summary}</p>
    ${text(op.description)}
    ${parameters(op)}
    ${
      body
        ? html`<h4>Request body${op.requestBody?.required ? "" : " (optional)"}: ${typeOf(body.schema)}</h4>
          ${example(body.example)}`
        : null
    }
    <h4>Responses</h4>
    <ul class="responses">${Object.entries(op.responses).map(
      ([status, response]) => html`<li>
        <span class="status s${status[0]}">${status}</span>
        ${response.$ref ? html`<a href="#schema-Problem">${refName(response.$ref)}</a>` : text(response.description)}
        ${answerType(Object.values(response.content ?? {})[0]?.schema)}
        ${example(Object.values(response.content ?? {})[0]?.example)}
      </li>`,
    )}</ul>
  </section>`;
}

/** One registered event type: what its webhook's body looks like. */
function webhook(type: string, op: Operation): Fragment {
  const body = op.requestBody?.content["application/json"];
  return html`<section class="op" id="webhook-${type}">
    <h3>
      <span class="m post">POST</span> <code class="path">${type}</code>
      ${(op as { deprecated?: boolean }).deprecated ? html`<span class="badge">deprecated</span>` : null}
    </h3>
    <p class="summary">${op.summary}</p>
    <details><summary>Body schema</summary><pre>${JSON.stringify(body?.schema, null, 2)}</pre></details>
  </section>`;
}

const STYLE = `
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6474; --line: #e3e6ec; --accent: #2f5bd3; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif; color: var(--fg); display: grid; grid-template-columns: 290px 1fr; }
nav { position: sticky; top: 0; height: 100vh; overflow: auto; padding: 20px; border-right: 1px solid var(--line); background: #f7f8fa; font-size: 13px; }
nav h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 18px 0 6px; }
nav a { display: block; color: var(--fg); text-decoration: none; padding: 2px 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
nav a:hover { color: var(--accent); }
main { padding: 24px 40px 80px; max-width: 1100px; min-width: 0; }
h1 { margin: 0 0 4px; } h1 small { font-size: 14px; color: var(--muted); font-weight: normal; }
h2.tag { margin-top: 40px; border-bottom: 2px solid var(--line); padding-bottom: 6px; }
.op { border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; margin: 16px 0; }
.op h3 { margin: 0; font-size: 16px; display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
.summary { font-weight: 600; margin: 6px 0; }
h4 { margin: 14px 0 6px; font-size: 14px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, "Liberation Mono", monospace; font-size: 13px; }
p code, td code, li code { background: #f1f3f6; padding: 1px 4px; border-radius: 4px; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow: auto; max-height: 360px; }
.m { font: 700 12px/1 ui-monospace, monospace; padding: 5px 8px; border-radius: 4px; color: #fff; min-width: 58px; text-align: center; }
.get { background: #2f7d4f; } .post { background: #2f5bd3; } .put { background: #a26a00; } .patch { background: #7b4bc4; } .delete { background: #c23b3b; }
.badge { font-size: 11px; border: 1px solid var(--line); border-radius: 10px; padding: 1px 8px; color: var(--muted); font-weight: 500; }
.badge.public { color: #2f7d4f; border-color: #b9dcc6; } .badge.ext { color: #7b4bc4; border-color: #d6c6ee; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; border-bottom: 1px solid var(--line); padding: 5px 8px; vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td p { margin: 0; }
.req { color: #c23b3b; font-size: 11px; margin-left: 6px; }
.rules { color: var(--muted); word-break: break-all; }
.responses { list-style: none; padding: 0; margin: 0; } .responses li { margin: 4px 0; } .responses li p { display: inline; }
.status { font: 700 12px ui-monospace, monospace; padding: 2px 6px; border-radius: 4px; background: #eef0f4; }
.s2 { background: #dff1e6; color: #1f6b3f; } .s4, .s5 { background: #fbe6e6; color: #a52d2d; }
details summary { cursor: pointer; color: var(--muted); font-size: 13px; }
a { color: var(--accent); }
@media (max-width: 800px) { body { display: block; } nav { position: static; height: auto; } main { padding: 16px; } }
`;

/** The page for one OpenAPI document. */
export function docsPage(document: Json): string {
  const info = document.info as { title: string; version: string; summary?: string; description?: string };
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, Schema>;
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
  const webhooks = (document.webhooks ?? {}) as Record<string, { post: Operation }>;
  const tagOf = (op: Operation) => op.tags[0] ?? "Other";
  const tags = [...new Set(operations.map((o) => tagOf(o.op)))];
  const inTag = (tag: string) => operations.filter((o) => tagOf(o.op) === tag);

  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${info.title} API ${info.version}</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<nav>
  <strong>${info.title}</strong> <span class="badge">${info.version}</span>
  <p><a href="/openapi.json">openapi.json</a><a href="/">dashboard</a></p>
  ${tags.map(
    (tag) => html`<h2>${tag}</h2>
      ${inTag(tag).map(
        ({ path, method, op }) =>
          html`<a href="#${op.operationId}" title="${op.summary}"><code>${method.toUpperCase()}</code> ${path}</a>`,
      )}`,
  )}
  <h2>Webhooks</h2>
  ${Object.keys(webhooks).map((type) => html`<a href="#webhook-${type}"><code>POST</code> ${type}</a>`)}
  <h2>Schemas</h2>
  ${Object.keys(schemas).map((name) => html`<a href="#schema-${name}">${name}</a>`)}
</nav>
<main>
  <h1>${info.title} API <small>OpenAPI ${String(document.openapi)}</small></h1>
  <p class="summary">${info.summary}</p>
  ${text(info.description)}
  ${tags.map(
    (tag) => html`<h2 class="tag">${tag}</h2>
      ${inTag(tag).map(({ path, method, op }) => operation(method, path, op))}`,
  )}
  <h2 class="tag">Webhooks</h2>
  <p>The registered event types (<code>PUT /v1/event-types/{type}</code>): what outboxd sends to your
  endpoints, signed as Standard Webhooks. <code>data</code> is the type's payload schema.</p>
  ${Object.entries(webhooks).map(([type, item]) => webhook(type, item.post))}
  <h2 class="tag">Schemas</h2>
  <p>Request bodies, converted from the valibot schemas that validate them, and the answers.</p>
  ${Object.entries(schemas).map(
    ([name, schema]) => html`<section class="op" id="schema-${name}">
      <h3>${name}</h3>
      ${text(schema.description as string | undefined)}
      ${
        schema.properties
          ? properties(schema)
          : html`<p>${typeOf(schema)} <span class="rules">${constraints(schema).join(", ")}</span></p>`
      }
      <details><summary>JSON Schema</summary><pre>${JSON.stringify(schema, null, 2)}</pre></details>
    </section>`,
  )}
</main>
</body>
</html>
`;
  if (page instanceof Promise) throw new Error("the docs page rendered asynchronously");
  return page.toString();
}
