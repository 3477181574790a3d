// API tokens (DESIGN §2 token, §3 scopes). Only a SHA-256 of each token is stored: a token has
// 256 random bits, so a fast hash is enough and a lookup by hash reveals nothing by its timing.
import { all, get, type Op, run } from "../db/op.ts";
import { sha256Hex } from "../lib/canonical-json.ts";
import { newId } from "../lib/ids.ts";
import { iso } from "../lib/time.ts";
import { type Actor, rejectProposalsOf } from "../proposals/store.ts";

/**
 * Every scope a token can hold (DESIGN §3, Scopes): the one list the API, the CLI and the
 * OpenAPI document take their names from. What each one allows is `allows` in authenticator.ts.
 */
export const SCOPES = ["read", "commit", "propose", "approve", "consume", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

export interface TokenIdentity {
  id: string;
  /** The token's name, recorded with what it commits (who committed). */
  name: string;
  scopes: Scope[];
}

export interface TokenView {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface TokenRow {
  id: string;
  name: string;
  scopes: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

const COLUMNS =
  "id, name, scopes, created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt";

function view(row: TokenRow): TokenView {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as Scope[],
    createdAt: iso(row.createdAt),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

export function generateToken(): string {
  return `otk_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`;
}

export function hashToken(token: string): string {
  return sha256Hex(token);
}

export function* createToken(
  name: string,
  scopes: Scope[],
  now: number,
): Op<{ token: string; view: TokenView }> {
  const token = generateToken();
  const row: TokenRow = {
    id: newId("tok", now),
    name,
    scopes: JSON.stringify(scopes),
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  yield* run(
    "INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (:id, :name, :hash, :scopes, :createdAt)",
    { id: row.id, name, hash: hashToken(token), scopes: row.scopes, createdAt: now },
  );
  return { token, view: view(row) };
}

/** The live token whose SHA-256 is `hash` (hashToken of what the client sent). */
export function* findToken(hash: string): Op<TokenIdentity | undefined> {
  const row = yield* get<{ id: string; name: string; scopes: string }>(
    "SELECT id, name, scopes FROM tokens WHERE hash = :hash AND revoked_at IS NULL",
    { hash },
  );
  return row ? { id: row.id, name: row.name, scopes: JSON.parse(row.scopes) as Scope[] } : undefined;
}

/** Which of these stored tokens are not revoked (a check of holders that outlive a request). */
export function* liveTokens(ids: readonly string[]): Op<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = yield* all<{ id: string }>(
    "SELECT id FROM tokens WHERE id IN (SELECT value FROM json_each(:ids)) AND revoked_at IS NULL",
    { ids: JSON.stringify(ids) },
  );
  return new Set(rows.map((r) => r.id));
}

export function* listTokens(limit: number, after: string | undefined): Op<TokenView[]> {
  const rows = yield* all<TokenRow>(
    `SELECT ${COLUMNS} FROM tokens WHERE (:after IS NULL OR id < :after) ORDER BY id DESC LIMIT :limit`,
    { after: after ?? null, limit },
  );
  return rows.map(view);
}

export function* countTokens(): Op<number> {
  return (yield* get<{ n: number }>("SELECT count(*) AS n FROM tokens"))?.n ?? 0;
}

/**
 * Revokes a token and, in the same transaction, rejects its pending proposals (DESIGN §10:
 * revocation reaches everything the token holds), decided by `by`, the revoking token (null from
 * the command line). False if there is no such token (or it was already revoked).
 */
export function* revokeToken(id: string, now: number, by: Actor | null = null): Op<boolean> {
  const revoked =
    (yield* run("UPDATE tokens SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL", { id, now })) >
    0;
  if (revoked) yield* rejectProposalsOf(id, by, now);
  return revoked;
}

export function* touchToken(id: string, now: number): Op<void> {
  yield* run("UPDATE tokens SET last_used_at = :now WHERE id = :id", { id, now });
}
