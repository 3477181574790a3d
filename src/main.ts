#!/usr/bin/env bun
// The `outboxd` command line. Exit codes: 0 success, 1 failure, 2 usage or configuration error.
// Each command's modules are imported when it runs: a command loads only what it uses, and
// `serve`/`dispatch` begin opening the database (src/opening.ts) before they load the rest.
import { UsageError } from "./cli/args.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/open.ts";
import { migrateDatabase } from "./ledger/genesis.ts";
import { beginOpening } from "./opening.ts";

const HELP = `outboxd — a transactional outbox in one binary

Usage: outboxd <command> [options]

Commands:
  serve                      HTTP API and dispatcher on PORT (default 8080)
  dispatch                   the dispatcher alone (several may share one database)
  migrate                    apply database migrations and exit
  stats                      the outbox's state: pending, in flight, due, dead, per endpoint
  replay --status dead [--endpoint ID] [--reason R] [--since TIME] [--within 24h]
                             put dead deliveries back to pending, with a progress bar
  token create --name N --scopes read,commit,propose,approve,consume,admin
                             create an API token and print it on stdout (shown once)
  token list                 list tokens (never their secrets)
  token revoke TOKEN_ID      revoke a token
  prune                      delete delivered deliveries, attempts and idempotency responses
                             older than OUTBOXD_RETENTION (7d); pending and dead deliveries
                             and the ledger are kept
  backup FILE                write a consistent copy of the live database (VACUUM INTO)
  verify [--anchor SEQ:HASH] check the ledger: every digest, the hash chain and each record's
                             current state; exit 0 "ok: <n> commits, head <hash>", exit 1
                             naming the first commit that does not add up (docs/ledger.md)
  erase --record COLLECTION/ID --version N | --event EVENT_ID
                             erase personal data from an old version or a delivered event's
                             payload; its digest stays, so the chain still verifies
  rotate-master-key [--decrypt]
                             re-seal every endpoint secret: opened with OUTBOXD_MASTER_KEY
                             (or plain if unset), sealed with OUTBOXD_NEW_MASTER_KEY (or
                             stored plain with --decrypt); stop outboxd first
  mcp --url URL              the MCP server for AI agents on stdio, acting on the outboxd at URL
                             with the token in OUTBOXD_TOKEN (docs/agents.md); logs on stderr
  help                       this text

Configuration is read from environment variables; see docs/configuration.md.
Exit codes: 0 success, 1 failure, 2 usage or configuration error.
`;

async function migrateCommand(): Promise<void> {
  // A command of its own: its writes run on this thread (OUTBOXD_WRITER_THREAD is the server's).
  const db = await openDatabase({ ...loadConfig(), writerThread: "main" });
  try {
    const applied = await db.writer.write(migrateDatabase());
    console.log(applied.length > 0 ? `applied: ${applied.join(", ")}` : "database is up to date");
  } finally {
    await db.close();
  }
}

/**
 * `serve` and `dispatch`: the writer thread starts, opens the database and migrates while this
 * thread loads the HTTP app and the dispatcher (cold start: they overlap instead of following).
 */
async function longRunning(command: "serveCommand" | "dispatchCommand"): Promise<void> {
  const config = loadConfig();
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
  verify: async (args) => (await ledger()).verifyCommand(args),
  erase: async (args) => (await ledger()).eraseCommand(args),
};
const LONG_RUNNING = new Set(["serve", "dispatch", "mcp"]);

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    console.log(HELP);
    return 0;
  }
  try {
    const run = COMMANDS[command];
    if (!run) throw new UsageError(`unknown command ${command}; see outboxd --help`);
    const code = await run(args);
    return LONG_RUNNING.has(command) ? -1 : typeof code === "number" ? code : 0;
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
