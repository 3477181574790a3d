import type { Context } from "hono";
import { faultsInJsonText } from "../lib/faithful-json.ts";
import { invalidField, Problem, problems } from "../lib/problem.ts";
import { pointer } from "./validation.ts";

/**
 * Reads the body as JSON within `maxBytes`: 413 beyond it (whatever Content-Length claims),
 * 400 for anything that is not JSON, 422 for JSON nested deeper than MAX_JSON_DEPTH and for
 * numbers or strings that would not come back as sent (src/lib/faithful-json.ts).
 */
export async function readJson(c: Context, maxBytes: number): Promise<unknown> {
  const length = c.req.header("content-length");
  if (length !== undefined && Number(length) > maxBytes) throw problems.tooLarge(maxBytes);
  // With a Content-Length (already checked) the runtime reads exactly that many bytes at once,
  // without the body's stream ever being made (asking for `body` makes one: ~1 µs a request);
  // only a chunked body of unknown length is counted as it streams in.
  let bytes: ArrayBuffer | Uint8Array;
  try {
    bytes = length !== undefined ? await c.req.raw.arrayBuffer() : await readCapped(c.req.raw.body, maxBytes);
  } catch (error) {
    if (error instanceof Problem) throw error;
    // The client closed the connection mid-body (or sent broken chunked framing): its fault,
    // not a bug, so a 400 (which it will likely never read) and an info log line, not a 500.
    throw problems.badJson("the body ended before it was complete");
  }
  if (bytes.byteLength === 0) throw problems.badJson("the request has no body");
  let text: string;
  try {
    text = DECODER.decode(bytes);
  } catch {
    throw problems.badJson("the body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw problems.badJson(`the body is not valid JSON: ${parserHint(error)}`);
  }
  // Nesting MAX_JSON_DEPTH deep takes that many brackets: a shorter text needs no scan.
  if (text.length >= MAX_JSON_DEPTH && nestingDepth(text) >= MAX_JSON_DEPTH) checkDepth(value);
  const faults = faultsInJsonText(text);
  if (faults.length > 0)
    throw problems.invalid(faults.map((f) => ({ pointer: pointer(f.path), detail: f.detail })));
  return value;
}

const DECODER = new TextDecoder("utf-8", { fatal: true });

async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  // The reader itself, not `for await`: the async iterator costs about a microsecond more per body.
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => {});
      throw problems.tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

/** The deepest bracket nesting of a JSON text, skipping strings: a cheap scan before the walk. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92)
        i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 91 || ch === 123) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (ch === 93 || ch === 125) depth--;
  }
  return deepest;
}

/**
 * The parser's complaint without the body's own text: JavaScriptCore quotes an unquoted word
 * (`Unexpected identifier "whsec_…"`, a secret pasted without quotes) and V8 quotes a slice of
 * the input, which a problem must not echo back into client and proxy logs.
 */
function parserHint(error: unknown): string {
  const message = String((error as Error)?.message ?? error).replace(/^JSON Parse error:\s*/, "");
  const cut = message.indexOf('"');
  return (cut === -1 ? message : message.slice(0, cut)).replace(/[\s,:]+$/, "") || "syntax error";
}

/**
 * JSON nested deeper than this is refused (422). A 1 MiB body can nest 500,000 levels, which
 * JSON.parse accepts but JSON.stringify (hashing, storing, signing) overflows the stack on.
 */
export const MAX_JSON_DEPTH = 256;

/** Walks the parsed body without recursion and refuses it, naming the place, if it nests too deep. */
function checkDepth(root: unknown): void {
  interface Node {
    value: unknown;
    depth: number;
    parent: Node | null;
    key: string | number;
  }
  const stack: Node[] = [{ value: root, depth: 0, parent: null, key: "" }];
  for (let node = stack.pop(); node; node = stack.pop()) {
    const { value } = node;
    if (typeof value !== "object" || value === null) continue;
    if (node.depth >= MAX_JSON_DEPTH) {
      const path: (string | number)[] = [];
      for (let at: Node | null = node; at?.parent; at = at.parent) path.unshift(at.key);
      throw invalidField(pointer(path), `nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
    for (const [key, child] of entries)
      stack.push({ value: child, depth: node.depth + 1, parent: node, key });
  }
}

/** Whether the request carries a body at all (an optional body may simply be left out). */
export function hasBody(c: Context): boolean {
  return (c.req.header("content-length") ?? "0") !== "0" || c.req.header("transfer-encoding") !== undefined;
}
