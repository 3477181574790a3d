// What `outboxd --help` and `outboxd <command> --help` print: one entry per command, its synopsis
// and what it does. Printing usage touches nothing (no database, no file, no port).
import pkg from "../../package.json" with { type: "json" };

interface Usage {
  /** One line for `outboxd --help`. */
  summary: string;
  /** The synopsis after `outboxd `, one line per form. */
  synopsis: string[];
  /** What the command does, a few lines. */
  text: string;
}

export const USAGE: Record<string, Usage> = {
  serve: {
    summary: "HTTP API, dashboard and dispatcher on PORT (default 8080)",
    synopsis: ["serve"],
    text: `The HTTP API, the dashboard and the dispatcher, on HOST:PORT (127.0.0.1:8080 unless set).
Creates the database (OUTBOXD_DATABASE_URL, default file:./data/outboxd.db) and an admin
token in data/admin-token on first start.`,
  },
  dispatch: {
    summary: "the dispatcher alone (several may share one database)",
    synopsis: ["dispatch"],
    text: "The dispatcher alone, no HTTP API; several may share one database.",
  },
  migrate: {
    summary: "apply database migrations and exit",
    synopsis: ["migrate"],
    text: "Creates the database if needed, applies its migrations and exits.",
  },
  listen: {
    summary: "a local webhook receiver for development: prints each event",
    synopsis: ["listen [--port 3000] [--secret whsec_… | --endpoint ID] [--verbose]"],
    text: `A local webhook receiver for development: verifies each webhook with the receiver snippet,
applies it once and prints one line per event (type, aggregate, sequence, applied/duplicate/
stale; the payload too with --verbose). With a token (OUTBOXD_TOKEN, else data/admin-token)
it registers a webhook endpoint for http://127.0.0.1:PORT/webhooks with the outboxd at
OUTBOXD (default http://127.0.0.1:8080), or reuses the one it registered before; when that
outboxd refuses local URLs (OUTBOXD_ALLOW_PRIVATE_ENDPOINTS off) it registers (or reuses) a
pull endpoint and fetches the events instead. With --endpoint ID it receives for that
endpoint (an admin token reads a webhook's secrets); with --secret it only verifies.`,
  },
  stats: {
    summary: "pending, in flight, due, dead, per endpoint",
    synopsis: ["stats"],
    text: "The outbox's state: pending, in flight, due, dead, in total and per endpoint.",
  },
  replay: {
    summary: "put dead deliveries back to pending",
    synopsis: ["replay --status dead [--endpoint ID] [--reason R] [--since TIME] [--within 24h]"],
    text: "Puts dead deliveries back to pending (a progress bar on stderr), with a new deadline.",
  },
  token: {
    summary: "create, list or revoke API tokens",
    synopsis: [
      "token create --name N --scopes read,commit,propose,approve,consume,admin",
      "token list",
      "token revoke TOKEN_ID",
    ],
    text: `create: makes an API token and prints it on stdout (shown once); creates the database if needed.
list: the tokens, never their secrets. revoke: revokes one.`,
  },
  prune: {
    summary: "delete delivered rows and attempts older than OUTBOXD_RETENTION",
    synopsis: ["prune"],
    text: `Deletes delivered deliveries, attempts and idempotency responses older than
OUTBOXD_RETENTION (7d); pending and dead deliveries and the ledger are kept.`,
  },
  backup: {
    summary: "a consistent copy of the live database (VACUUM INTO)",
    synopsis: ["backup FILE"],
    text: "Writes a consistent copy of the live database to FILE, a new file (VACUUM INTO).",
  },
  verify: {
    summary: "check the ledger: digests, hash chain, current states",
    synopsis: ["verify [--anchor SEQ:HASH]"],
    text: `Checks the ledger: every digest, the hash chain and each record's current state. Exit 0
"ok: <n> commits, head <hash>", exit 1 naming the first commit that does not add up
(docs/ledger.md).`,
  },
  erase: {
    summary: "erase personal data; the chain still verifies",
    synopsis: ["erase --record COLLECTION/ID --version N", "erase --event EVENT_ID"],
    text: `Erases personal data from an old version of a record or a delivered event's payload; its
digest stays, so the chain still verifies.`,
  },
  "rotate-master-key": {
    summary: "re-seal every endpoint secret with a new master key",
    synopsis: ["rotate-master-key [--decrypt]"],
    text: `Re-seals every endpoint secret: opened with OUTBOXD_MASTER_KEY (or plain if unset), sealed
with OUTBOXD_NEW_MASTER_KEY (or stored plain with --decrypt). Stop outboxd first.`,
  },
  endpoint: {
    summary: "show and change an endpoint's controls through the API",
    synopsis: [
      "endpoint list|show ID --url URL",
      "endpoint set ID [--rate-limit N[/BURST]|none] [--retry-schedule 5s,30s|none] [--disable-after 5d|never] [--filter JSON|none] [--disabled true|false] --url URL",
      "endpoint enable ID --url URL",
      "endpoint recover ID --since TIME [--until TIME] [--deliver-within D] --url URL",
    ],
    text: `Calls the HTTP API of the outboxd at URL (or OUTBOXD_URL) with the token in OUTBOXD_TOKEN
and prints its JSON answer; a refusal prints the problem's pointers, exit 1
(docs/endpoint-controls.md).`,
  },
  mcp: {
    summary: "the MCP server for AI agents on stdio",
    synopsis: ["mcp --url URL"],
    text: `The MCP server for AI agents on stdio, acting on the outboxd at URL with the token in
OUTBOXD_TOKEN (docs/agents.md); logs on stderr.`,
  },
};

const FOOTER = `Configuration is read from environment variables; see docs/configuration.md.
Exit codes: 0 success, 1 failure, 2 usage or configuration error.`;

export const VERSION = `outboxd ${pkg.version}`;

/** `outboxd --help`: every command's synopsis and first line. */
export function overview(): string {
  const lines = [
    `${VERSION} — a transactional outbox in one binary`,
    "",
    "Usage: outboxd <command> [options]",
    "",
  ];
  lines.push("Commands:");
  const column = 28;
  const row = (left: string, right: string) =>
    left.length < column - 3
      ? [`  ${left.padEnd(column - 2)}${right}`]
      : [`  ${left}`, `${" ".repeat(column)}${right}`];
  for (const usage of Object.values(USAGE)) {
    const [first, ...rest] = usage.synopsis;
    if (rest.length === 0) lines.push(...row(first ?? "", usage.summary));
    else lines.push(...usage.synopsis.map((s) => `  ${s}`), `${" ".repeat(column)}${usage.summary}`);
  }
  lines.push(...row("--version", "the version"), ...row("help, --help, -h", "this text"), "");
  lines.push("`outboxd <command> --help` describes one command.", FOOTER);
  return lines.join("\n");
}

/** `outboxd <command> --help`. */
export function commandUsage(command: string): string | undefined {
  const usage = USAGE[command];
  if (!usage) return undefined;
  return [
    `Usage: ${usage.synopsis.map((s) => `outboxd ${s}`).join("\n       ")}`,
    "",
    usage.text,
    "",
    FOOTER,
  ].join("\n");
}

/** `--help` or `-h` anywhere among a command's arguments. */
export function asksForHelp(args: readonly string[]): boolean {
  return args.includes("--help") || args.includes("-h");
}
