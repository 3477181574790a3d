// Standard Webhooks signatures (DESIGN §4): HMAC-SHA256 over `<id>.<timestamp>.<body>` with the
// base64-decoded bytes of each `whsec_` secret, one `v1,<base64>` entry per active secret.
import { createHmac } from "node:crypto";

export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
      return `v1,${createHmac("sha256", key).update(content).digest("base64")}`;
    })
    .join(" ");
}
