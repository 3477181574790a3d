// The tokens' named writes (db/writer-ops.ts). A new token's secret is made inside the write and
// travels back only in the answer.
import type { Op } from "../db/op.ts";
import { defineWrite } from "../db/writer-ops.ts";
import { countTokens, createToken, revokeToken, type TokenView, touchToken } from "./tokens.ts";

/** The first admin token, unless a token exists already (bootstrap.ts). */
function* bootstrapToken(now: number): Op<{ token: string; view: TokenView } | null> {
  if ((yield* countTokens()) > 0) return null;
  return yield* createToken("bootstrap admin", ["admin"], now);
}

export const createTokenWrite = defineWrite("auth.createToken", createToken, { again: false });
export const bootstrapTokenWrite = defineWrite("auth.bootstrapToken", bootstrapToken, { again: false });
export const revokeTokenWrite = defineWrite("auth.revokeToken", revokeToken, { again: false });
export const touchTokenWrite = defineWrite("auth.touchToken", touchToken, { again: false });
