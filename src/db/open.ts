import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Driver } from "./driver.ts";
import { openEngineDriver } from "./engine-driver.ts";
import { makeDatabaseFilesPrivate } from "./private-files.ts";
import { Writer } from "./writer.ts";

export interface Database {
  driver: Driver;
  writer: Writer;
  /** Absolute path of the database file, or null for a remote database. */
  file: string | null;
  close(): Promise<void>;
}

/** What opening the database needs; src/config.ts reads and validates it (Config extends this). */
export interface DatabaseConfig {
  databaseUrl: string;
  databaseAuthToken: string | undefined;
  /** `engine` (libsql package, local files only) or `client` (@libsql/client). */
  driver: "engine" | "client";
  synchronous: "FULL" | "NORMAL";
  busyTimeoutMs: number;
}

/** The file path of a `file:` URL (query string dropped), or null for remote URLs. */
export function localPath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path =
    url
      .slice("file:".length)
      .replace(/^\/\/(?=\/)/, "")
      .split("?")[0] ?? "";
  return resolve(path);
}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  const file = localPath(config.databaseUrl);
  if (file) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    makeDatabaseFilesPrivate(file);
  }
  const options = { synchronous: config.synchronous, busyTimeoutMs: config.busyTimeoutMs };
  const driver =
    config.driver === "engine" && file
      ? openEngineDriver(file, options)
      : // @libsql/client is imported only for the databases that need it (remote, or driver=client).
        await (await import("./client-driver.ts")).openClientDriver(
          { url: config.databaseUrl, authToken: config.databaseAuthToken },
          options,
        );
  const writer = new Writer(driver);
  return {
    driver,
    writer,
    file,
    async close() {
      await writer.idle();
      await driver.close();
    },
  };
}
