import type { Context } from "hono";
import { problems } from "../lib/problem.ts";

/**
 * Reads the body as JSON within `maxBytes`: 413 beyond it (whatever Content-Length claims),
 * 400 for anything that is not JSON.
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
  try {
    return JSON.parse(text);
  } catch (error) {
    throw problems.badJson(`the body is not valid JSON: ${(error as Error).message}`);
  }
}
