// Who is calling: the bearer token of a request, resolved to its id and scopes.

import { timingSafeEqual } from "node:crypto";
import type { Database } from "../db/open.ts";
import type { Clock } from "../lib/time.ts";
import { findToken, hashToken, SCOPES, type Scope, type TokenIdentity } from "./tokens.ts";
import { touchTokenWrite } from "./writes.ts";

/** The identity of OUTBOXD_ADMIN_TOKEN, which is configuration, not a stored token. */
export const ENV_ADMIN: TokenIdentity = {
  id: "tok_env_admin",
  name: "OUTBOXD_ADMIN_TOKEN",
  scopes: ["admin"],
};
const TOUCH_EVERY_MS = 60_000;

/** The stored token behind an identity, which revocation can reach; null for OUTBOXD_ADMIN_TOKEN. */
export function storedTokenId(identity: TokenIdentity): string | null {
  return identity.id === ENV_ADMIN.id ? null : identity.id;
}

export class Authenticator {
  readonly #db: Database;
  readonly #adminHash: Buffer | null;
  readonly #clock: Clock;
  readonly #touched = new Map<string, number>();

  constructor(db: Database, adminToken: string | undefined, clock: Clock) {
    this.#db = db;
    this.#adminHash = adminToken === undefined ? null : Buffer.from(hashToken(adminToken), "hex");
    this.#clock = clock;
  }

  async authenticate(token: string): Promise<TokenIdentity | undefined> {
    // One hash of what was sent serves both checks; equal-length digests compare in constant time.
    const hash = hashToken(token);
    if (this.#adminHash && timingSafeEqual(Buffer.from(hash, "hex"), this.#adminHash)) return ENV_ADMIN;
    const identity = await this.#db.driver.read(findToken(hash));
    if (identity) this.#touch(identity.id);
    return identity;
  }

  /** Records last use at most once a minute per token, off the request's path. */
  #touch(id: string): void {
    const now = this.#clock();
    if (now - (this.#touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.#touched.set(id, now);
    this.#db.write(touchTokenWrite(id, now)).catch(() => this.#touched.delete(id));
  }
}

/** Scopes that hold others (DESIGN §3): admin holds every scope, commit holds propose. */
const IMPLIED: Partial<Record<Scope, readonly Scope[]>> = {
  admin: SCOPES,
  commit: ["propose"],
};

/** Whether a token holding `held` may act with `scope`. */
export function holds(held: readonly Scope[], scope: Scope): boolean {
  return held.some((h) => h === scope || (IMPLIED[h]?.includes(scope) ?? false));
}

/** Whether the identity holds one of the `needed` scopes (any of a list suffices). */
export function allows(identity: TokenIdentity, needed: Scope | readonly Scope[]): boolean {
  const options: readonly Scope[] = typeof needed === "string" ? [needed] : needed;
  return options.some((scope) => holds(identity.scopes, scope));
}
