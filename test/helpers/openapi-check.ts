// Checks real answers against /openapi.json: the operation for the request's method and path,
// the status among its documented answers, the media type, and the JSON body against the
// documented schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses). Any test can wrap its
// requests with it; test/http/openapi.test.ts runs a whole workload through it.
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// biome-ignore lint/suspicious/noExplicitAny: the document is read freely
type Doc = any;

const COMPONENTS = "https://outboxd.test/components";

export interface Checked {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read bodies freely
  body: any;
}

/**
 * The routes `app` serves that `doc` does not document (`get /v1/x/{id}`), middleware (`ALL`) aside,
 * and the documented ones it does not serve.
 */
export function routeDrift(
  routes: readonly { method: string; path: string }[],
  doc: Doc,
): { undocumented: string[]; unserved: string[] } {
  const served = new Set(
    routes
      .filter((r) => r.method !== "ALL")
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`),
  );
  const documented = new Set(
    Object.entries<Doc>(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`)),
  );
  return {
    undocumented: [...served].filter((route) => !documented.has(route)),
    unserved: [...documented].filter((route) => !served.has(route)),
  };
}

export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  /** `method template status` of every answer checked. */
  readonly seen = new Set<string>();

  constructor(readonly doc: Doc) {
    addFormats(this.ajv);
    // OpenAPI's own keyword for one example inside a schema.
    this.ajv.addKeyword({ keyword: "example" });
    this.ajv.addSchema({ $id: COMPONENTS, $defs: this.rewrite(doc.components.schemas) });
  }

  /** `#/components/schemas/X` → the same schema in the components registered with ajv. */
  private rewrite(schema: unknown): unknown {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS}#/$defs/`));
  }

  /** The documented path template of a concrete path: the match with the most literal segments. */
  template(method: string, path: string): string | undefined {
    const segments = path.split("?")[0]?.split("/") ?? [];
    let best: { template: string; literal: number } | undefined;
    for (const [template, item] of Object.entries<Doc>(this.doc.paths)) {
      if (!item[method.toLowerCase()]) continue;
      const parts = template.split("/");
      if (parts.length !== segments.length) continue;
      let literal = 0;
      const matches = parts.every((part, i) => {
        if (/^\{[^}]+\}$/.test(part)) return (segments[i] ?? "") !== "";
        literal++;
        return part === segments[i];
      });
      if (matches && (!best || literal > best.literal)) best = { template, literal };
    }
    return best?.template;
  }

  /** The schema a JSON answer must follow (throws when the answer is not documented). */
  validator(method: string, template: string, status: number, mediaType: string): ValidateFunction | null {
    const key = `${method} ${template} ${status} ${mediaType}`;
    const cached = this.compiled.get(key);
    if (cached) return cached;
    const op = this.doc.paths[template][method.toLowerCase()];
    let response = op.responses[String(status)];
    const what = `${method.toUpperCase()} ${template} answered ${status} (${mediaType})`;
    if (!response) throw new Error(`${what}, a status /openapi.json does not document for it`);
    if (response.$ref) response = this.doc.components.responses[response.$ref.split("/").pop()];
    if (mediaType === "" && response.content === undefined) return null; // documented without a body
    const media = response.content?.[mediaType];
    if (!media) {
      throw new Error(
        `${what}, but it documents ${Object.keys(response.content ?? {}).join(", ") || "no body"}`,
      );
    }
    if (!mediaType.endsWith("json")) return null;
    if (!media.schema) throw new Error(`${what}: the answer has no schema in /openapi.json`);
    const validate = this.ajv.compile(this.rewrite(media.schema) as object);
    this.compiled.set(key, validate);
    return validate;
  }

  /** Checks `body` (parsed JSON, or text) against the documented answer. */
  checkBody(method: string, path: string, status: number, mediaType: string, body: unknown): void {
    const template = this.template(method, path);
    if (!template) throw new Error(`${method.toUpperCase()} ${path} is not documented in /openapi.json`);
    const validate = this.validator(method, template, status, mediaType);
    this.seen.add(`${method.toLowerCase()} ${template} ${status}`);
    if (validate && !validate(body)) {
      throw new Error(
        `${method.toUpperCase()} ${path} (${template}) answered ${status} with a body its documented schema ` +
          `refuses: ${this.ajv.errorsText(validate.errors, { dataVar: "body" })}\n${JSON.stringify(body).slice(0, 800)}`,
      );
    }
  }

  /** Reads `response` and checks it; returns what it read. */
  async check(method: string, path: string, response: Response): Promise<Checked> {
    const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
    const text = await response.text();
    const body = mediaType.endsWith("json") ? JSON.parse(text) : text;
    if (mediaType === "" && text !== "") throw new Error(`${method} ${path}: a body without a content-type`);
    this.checkBody(method, path, response.status, mediaType, body);
    return { status: response.status, headers: response.headers, body };
  }
}
