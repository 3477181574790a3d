#!/usr/bin/env bun
// The `outboxd` command line. Exit codes: 0 success, 1 failure, 2 usage or configuration error.
// Each command's modules are imported when it runs: a command loads only what it uses, and
// `serve`/`dispatch` begin opening the database (src/opening.ts) before they load the rest.
import { CommandError, UsageError } from "./cli/args.ts";
import { asksForHelp, commandUsage, overview, VERSION } from "./cli/usage.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/open.ts";
import { migrateDatabase } from "./ledger/genesis.ts";
import { beginOpening } from "./opening.ts";

async function migrateCommand(): Promise<void> {
  const db = await openDatabase(loadConfig());
  try {
    const applied = await db.writer.write(migrateDatabase());
    console.log(applied.length > 0 ? `applied: ${applied.join(", ")}` : "database is up to date");
  } finally {
    await db.close();
  }
}

/**
 * `serve` and `dispatch`: opening the database and migrating begin before this thread loads the
 * HTTP app and the dispatcher (src/opening.ts).
 */
async function longRunning(command: "serveCommand" | "dispatchCommand"): Promise<void> {
  const config = loadConfig();
  // Only serve creates a database; a dispatcher pointed at the wrong place says so.
  if (command === "dispatchCommand") await (await import("./cli/database.ts")).requireDatabase(config);
  const opening = beginOpening(config);
  await (await import("./cli/serve.ts"))[command](config, opening);
}

const admin = () => import("./cli/admin.ts");
const ledger = () => import("./cli/ledger.ts");

// A command resolves to its exit code, or to nothing for 0.
const COMMANDS: Record<string, (args: string[]) => Promise<unknown>> = {
  serve: () => longRunning("serveCommand"),
  dispatch: () => longRunning("dispatchCommand"),
  migrate: migrateCommand,
  stats: async () => (await admin()).statsCommand(),
  replay: async (args) => (await admin()).replayCommand(args),
  token: async (args) => (await admin()).tokenCommand(args),
  prune: async () => (await admin()).pruneCommand(),
  backup: async (args) => (await admin()).backupCommand(args),
  "rotate-master-key": async (args) => (await admin()).rotateMasterKeyCommand(args),
  // The MCP SDK is heavy for every other command.
  mcp: async (args) => (await import("./mcp/stdio.ts")).mcpCommand(args),
  listen: async (args) => (await import("./cli/listen.ts")).listenCommand(args),
  endpoint: async (args) => (await import("./cli/endpoint.ts")).endpointCommand(args),
  verify: async (args) => (await ledger()).verifyCommand(args),
  erase: async (args) => (await ledger()).eraseCommand(args),
};
const LONG_RUNNING = new Set(["serve", "dispatch", "mcp", "listen"]);

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    console.log(overview());
    return 0;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    console.log(VERSION);
    return 0;
  }
  try {
    const run = COMMANDS[command];
    if (!run) throw new UsageError(`unknown command ${command}; see outboxd --help`);
    // Before anything runs: usage touches no database, file or port.
    if (asksForHelp(args)) {
      console.log(commandUsage(command));
      return 0;
    }
    const code = await run(args);
    return LONG_RUNNING.has(command) ? -1 : typeof code === "number" ? code : 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    if (error instanceof CommandError) {
      console.error(error.message);
      return 1;
    }
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  }
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
