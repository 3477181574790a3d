// First start (DESIGN §8): with no OUTBOXD_ADMIN_TOKEN and no stored token, create an admin
// token and write it to `admin-token` beside the database file with mode 0600. Only the
// file's path is printed: tokens never go to logs.
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Database } from "../db/open.ts";
import { countTokens, createToken } from "./tokens.ts";

export async function bootstrapAdminToken(db: Database, now: number): Promise<string | null> {
  const path = db.file ? join(dirname(db.file), "admin-token") : resolve("admin-token");
  const created = await db.writer.write(
    (function* () {
      if ((yield* countTokens()) > 0) return null;
      return yield* createToken("bootstrap admin", ["admin"], now);
    })(),
  );
  if (!created) return null;
  writeFileSync(path, `${created.token}\n`, { mode: 0o600 });
  return path;
}
