// The database holds every payload and (without a master key) the endpoints' signing secrets,
// so its files are readable by their owner only, like the admin-token file beside them.
import { chmodSync, closeSync, existsSync, openSync, statSync } from "node:fs";

export const PRIVATE_MODE = 0o600;

/**
 * Creates `path` empty with mode 0600 if it does not exist, and takes group and other access
 * away from it if it does. SQLite creates a database's -wal and -shm files with the mode of the
 * database file itself, so a private database file makes them private too.
 */
export function ensurePrivateFile(path: string): void {
  // An existing file is not opened: this process may hold it open through SQLite already, and
  // closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
  // included (https://sqlite.org/howtocorrupt.html §2.2).
  if (!existsSync(path)) closeSync(openSync(path, "a", PRIVATE_MODE));
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, PRIVATE_MODE);
}

/** The database file and its WAL and shared-memory files, where they exist, made private. */
export function makeDatabaseFilesPrivate(file: string): void {
  ensurePrivateFile(file);
  for (const companion of [`${file}-wal`, `${file}-shm`]) {
    if (existsSync(companion) && (statSync(companion).mode & 0o077) !== 0) chmodSync(companion, PRIVATE_MODE);
  }
}

/** A new, empty file of mode 0600 that must not exist yet (a backup's target). */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, "wx", PRIVATE_MODE));
  chmodSync(path, PRIVATE_MODE); // in case the umask took bits away from 0600 (never adds any)
}
