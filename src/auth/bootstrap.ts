// First start (DESIGN §8): with no OUTBOXD_ADMIN_TOKEN and no stored token, create an admin
// token and write it to `admin-token` beside the database file with mode 0600. Only the
// file's path is printed: tokens never go to logs.
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Database } from "../db/open.ts";
import { bootstrapTokenWrite } from "./writes.ts";

export async function bootstrapAdminToken(db: Database, now: number): Promise<string | null> {
  const path = db.file ? join(dirname(db.file), "admin-token") : resolve("admin-token");
  const created = await db.write(bootstrapTokenWrite(now));
  if (!created) return null;
  // writeFileSync's mode applies only to a new file: an existing admin-token (say 0644) would
  // keep its mode and hand the token to every local user. Write a new 0600 file and rename it
  // over the path instead; `wx` refuses to reuse a leftover temporary file.
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  writeFileSync(temporary, `${created.token}\n`, { mode: 0o600, flag: "wx" });
  renameSync(temporary, path);
  return path;
}
