// Standard Webhooks signatures (DESIGN §4): HMAC-SHA256 over `<id>.<timestamp>.<body>` with the
// base64-decoded bytes of each `whsec_` secret, one `v1,<base64>` entry per active secret.
import { createHmac } from "node:crypto";
import { memoized } from "../lib/memo.ts";

/** Each secret's key bytes, decoded once (a send signs with the same few secrets thousands of times). */
const keyOf = memoized(
  (secret: string) => Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64"),
  1024,
);

function hmac(key: Uint8Array, content: string): string {
  return createHmac("sha256", key).update(content).digest("base64");
}

export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  // A loop, not map/join: one secret (the common case) is one string, and no callback per send.
  let header = "";
  for (const secret of secrets) {
    const entry = `v1,${hmac(keyOf(secret), content)}`;
    header = header === "" ? entry : `${header} ${entry}`;
  }
  return header;
}
