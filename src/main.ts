#!/usr/bin/env bun
// The `outboxd` command line. Exit codes: 0 success, 1 failure, 2 usage or configuration error.
import { createOutboxd } from "./app.ts";
import { createToken, type Scope } from "./auth/tokens.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { migrate } from "./db/migrate.ts";
import { openDatabase } from "./db/open.ts";

const HELP = `outboxd — a transactional outbox in one binary

Usage: outboxd <command> [options]

Commands:
  serve                         HTTP API and dispatcher on PORT (default 8080)
  dispatch                      the dispatcher alone (several may share one database)
  migrate                       apply database migrations and exit
  token create --name N --scopes read,commit,admin
                                create an API token and print it (shown once)
  help                          this text

Configuration is read from environment variables; see docs/configuration.md.
`;

class UsageError extends Error {}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i === -1) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith("--")) throw new UsageError(`--${name} needs a value`);
  return value;
}

async function serve(): Promise<void> {
  const config = loadConfig();
  const outboxd = await createOutboxd(config);
  const server = Bun.serve({ hostname: config.host, port: config.port, fetch: outboxd.http.fetch });
  outboxd.logger.log("info", "listening", {
    url: `http://${server.hostname}:${server.port}`,
    pid: process.pid,
  });
  // The metrics listener serves /metrics only, without a token, for a scraper on a private network.
  const metricsServer =
    config.metricsPort === undefined
      ? null
      : Bun.serve({
          hostname: config.host,
          port: config.metricsPort,
          fetch: (request) =>
            new URL(request.url).pathname === "/metrics"
              ? outboxd.metricsResponse()
              : new Response("not found", { status: 404 }),
        });
  if (metricsServer) {
    outboxd.logger.log("info", "metrics listening", {
      url: `http://${metricsServer.hostname}:${metricsServer.port}/metrics`,
    });
  }
  const shutdown = async (signal: string) => {
    outboxd.logger.log("info", "shutting down", { signal });
    await server.stop();
    await metricsServer?.stop();
    await outboxd.stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

async function dispatch(): Promise<void> {
  const config = loadConfig();
  const outboxd = await createOutboxd(config);
  outboxd.logger.log("info", "dispatching", { pid: process.pid });
  const shutdown = async (signal: string) => {
    outboxd.logger.log("info", "shutting down", { signal });
    await outboxd.stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

async function migrateCommand(): Promise<void> {
  const db = await openDatabase(loadConfig());
  const applied = await db.writer.write(migrate());
  console.log(applied.length > 0 ? `applied: ${applied.join(", ")}` : "database is up to date");
  await db.close();
}

async function tokenCommand(args: string[]): Promise<void> {
  if (args[0] !== "create")
    throw new UsageError("usage: outboxd token create --name NAME --scopes read,commit,admin");
  const name = option(args, "name");
  const scopes = (option(args, "scopes") ?? "").split(",").filter(Boolean);
  if (!name) throw new UsageError("--name is required");
  const valid: Scope[] = ["read", "commit", "admin"];
  if (scopes.length === 0 || scopes.some((s) => !valid.includes(s as Scope))) {
    throw new UsageError("--scopes must list read, commit and/or admin, comma-separated");
  }
  const db = await openDatabase(loadConfig());
  await db.writer.write(migrate());
  const { token, view } = await db.writer.write(createToken(name, scopes as Scope[], Date.now()));
  await db.close();
  console.error(`created ${view.id} (${view.scopes.join(",")}); the token is printed once, on stdout:`);
  console.log(token);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case "serve":
        await serve();
        return -1; // keeps running
      case "dispatch":
        await dispatch();
        return -1; // keeps running
      case "migrate":
        await migrateCommand();
        return 0;
      case "token":
        await tokenCommand(args);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(HELP);
        return 0;
      default:
        throw new UsageError(`unknown command ${command}; see outboxd --help`);
    }
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  }
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
