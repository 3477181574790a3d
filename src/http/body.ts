import type { Context } from "hono";
import { invalidField, problems } from "../lib/problem.ts";
import { pointer } from "./validation.ts";

/**
 * Reads the body as JSON within `maxBytes`: 413 beyond it (whatever Content-Length claims),
 * 400 for anything that is not JSON, 422 for JSON nested deeper than MAX_JSON_DEPTH.
 */
export async function readJson(c: Context, maxBytes: number): Promise<unknown> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > maxBytes) throw problems.tooLarge(maxBytes);
  const body = c.req.raw.body;
  if (!body) throw problems.badJson("the request has no body");
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw problems.tooLarge(maxBytes);
    chunks.push(chunk);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw problems.badJson("the body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw problems.badJson(`the body is not valid JSON: ${(error as Error).message}`);
  }
  checkDepth(value);
  return value;
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
