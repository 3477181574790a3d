// Endpoint signing secrets (Standard Webhooks: `whsec_` + base64 of the key bytes). An
// endpoint keeps its current secret and up to five older ones, each until its own expiry,
// so receivers can roll over without dropping a webhook. At rest the list is sealed with
// AES-256-GCM when OUTBOXD_MASTER_KEY is set.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface StoredSecret {
  secret: string;
  /** null for the current secret; ms epoch for a rotated-out one. */
  expiresAt: number | null;
}

export const MAX_OLD_SECRETS = 5;
const SEALED_PREFIX = "aesgcm:";

export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** Secrets that still sign at `now`, current first. */
export function activeSecrets(secrets: StoredSecret[], now: number): string[] {
  return secrets.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.secret);
}

/** The list after a rotation: the new secret current, the old one valid for `graceMs`. */
export function rotate(secrets: StoredSecret[], next: string, now: number, graceMs: number): StoredSecret[] {
  const older = secrets
    .map((s) => (s.expiresAt === null ? { ...s, expiresAt: now + graceMs } : s))
    .filter((s) => (s.expiresAt ?? 0) > now)
    .sort((a, b) => (b.expiresAt ?? 0) - (a.expiresAt ?? 0))
    .slice(0, MAX_OLD_SECRETS);
  return [{ secret: next, expiresAt: null }, ...older];
}

export class SecretBox {
  readonly #key: Buffer | null;

  constructor(masterKeyBase64: string | undefined) {
    this.#key = masterKeyBase64 ? Buffer.from(masterKeyBase64, "base64") : null;
  }

  get encrypting(): boolean {
    return this.#key !== null;
  }

  seal(secrets: StoredSecret[]): string {
    const plain = JSON.stringify(secrets);
    if (!this.#key) return plain;
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
  }

  open(stored: string): StoredSecret[] {
    if (!stored.startsWith(SEALED_PREFIX)) return JSON.parse(stored) as StoredSecret[];
    if (!this.#key) throw new Error("endpoint secrets are encrypted but OUTBOXD_MASTER_KEY is not set");
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    try {
      return JSON.parse(
        Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8"),
      );
    } catch {
      // The operator's log should say what is wrong, not OpenSSL's "unable to authenticate data".
      throw new Error(
        "endpoint secrets cannot be decrypted: OUTBOXD_MASTER_KEY is not the key they were sealed with (see `outboxd rotate-master-key`)",
      );
    }
  }
}
