// `outboxd listen`: a receiver for development on 127.0.0.1, built from the receiver snippet
// (src/receiver/verify.ts) exactly as a user's own receiver would be: it verifies each webhook,
// applies it once (an in-memory inbox) and prints one line per event on stdout. Given a token it
// registers its own endpoint (listen-endpoint.ts), so the first webhook needs no public URL.
// Messages about itself go to stderr; the event lines are the only thing on stdout.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { localPath } from "../db/sqlite.ts";
import {
  type ApplyResult,
  applyOnce,
  ConsumeError,
  consume,
  memoryStore,
  type OutboxEvent,
  verifyWebhook,
  WebhookError,
} from "../receiver/verify.ts";
import { CommandError, option, UsageError } from "./args.ts";
import { Api, namedSource, registeredSource, type Source } from "./listen-endpoint.ts";

const USAGE = "usage: outboxd listen [--port 3000] [--secret whsec_… | --endpoint ID] [--verbose]";
const DEFAULT_OUTBOXD = "http://127.0.0.1:8080";

interface Options {
  port: number;
  secret: string | undefined;
  endpoint: string | undefined;
  verbose: boolean;
}

function parse(args: string[]): Options {
  const known = new Set(["--port", "--secret", "--endpoint", "--verbose"]);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!known.has(arg)) throw new UsageError(`unknown option ${arg}; ${USAGE}`);
    if (arg !== "--verbose") i++;
  }
  const portText = option(args, "port") ?? "3000";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535)
    throw new UsageError("--port must be a port number, 0 to 65535");
  const secret = option(args, "secret");
  const endpoint = option(args, "endpoint");
  if (secret !== undefined && endpoint !== undefined)
    throw new UsageError(`--secret or --endpoint, not both; ${USAGE}`);
  if (secret !== undefined && !secret.startsWith("whsec_"))
    throw new UsageError("--secret must be a whsec_… secret");
  return { port, secret, endpoint, verbose: args.includes("--verbose") };
}

/** OUTBOXD_TOKEN, else the admin-token file beside the database (data/admin-token by default). */
function findToken(): { token: string; from: string } | undefined {
  const env = process.env.OUTBOXD_TOKEN?.trim();
  if (env) return { token: env, from: "OUTBOXD_TOKEN" };
  const file = localPath(process.env.OUTBOXD_DATABASE_URL?.trim() || "file:./data/outboxd.db");
  const path = file ? join(dirname(file), "admin-token") : undefined;
  if (path && existsSync(path)) return { token: readFileSync(path, "utf8").trim(), from: path };
  return undefined;
}

/** One line per event: time, type, aggregate and sequence, outcome; the payload with --verbose. */
function printer(verbose: boolean) {
  return (event: OutboxEvent, { result, missed }: ApplyResult) => {
    const time = new Date().toISOString().slice(11, 19);
    const gap = missed > 0 ? ` (${missed} earlier not seen)` : "";
    console.log(`${time}  ${event.type}  ${event.aggregate} #${event.sequence}  ${result}${gap}`);
    if (verbose) console.log(`  ${event.id}  ${JSON.stringify(event.data)}`);
  };
}

const note = (line: string) => process.stderr.write(`${line}\n`);

export async function listenCommand(args: string[]): Promise<void> {
  const options = parse(args);
  const store = memoryStore();
  const print = printer(options.verbose);
  let secrets: string[] = options.secret ? [options.secret] : [];
  // Bound first: the registered URL carries the port actually bound (--port 0 picks one).
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: options.port,
      fetch: (request) => receive(request),
    });
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EADDRINUSE") throw error;
    throw new CommandError(`port ${options.port} on 127.0.0.1 is in use: choose another with --port`);
  }
  const url = `http://127.0.0.1:${server.port}/webhooks`;

  async function receive(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response("outboxd listen: POST webhooks here\n");
    try {
      const event = await verifyWebhook({ headers: request.headers, body: await request.text() }, secrets);
      const result = await applyOnce(event, store, () => {});
      print(event, result);
      return Response.json({ result: result.result });
    } catch (error) {
      if (!(error instanceof WebhookError)) throw error;
      note(`refused a webhook: ${error.code} (${error.message})`);
      return Response.json({ error: error.code }, { status: 400 });
    }
  }

  let source: Source | undefined;
  let api: Api | undefined;
  try {
    if (options.secret === undefined) {
      const found = findToken();
      if (!found) {
        throw new UsageError(
          "outboxd listen needs a token to register its endpoint: set OUTBOXD_TOKEN, run it beside data/admin-token, or pass --secret whsec_… to only verify",
        );
      }
      api = new Api((process.env.OUTBOXD?.trim() || DEFAULT_OUTBOXD).replace(/\/+$/, ""), found.token);
      source =
        options.endpoint === undefined
          ? await registeredSource(api, url, note)
          : await namedSource(api, options.endpoint, url, note);
      if (source.kind === "webhook") secrets = source.secrets;
    }
  } catch (error) {
    await server.stop(true);
    throw error;
  }

  const stopping = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      stopping.abort();
      void server.stop(true);
      process.exit(0);
    });
  }
  if (source?.kind === "pull" && api) {
    // Nothing is sent to this listener: the port is not needed.
    void server.stop(true);
    note(`pulling from ${source.id}; each event prints here (Ctrl-C stops)`);
    consume({
      url: api.base,
      token: api.token,
      endpoint: source.id,
      store,
      apply: () => {},
      signal: stopping.signal,
      onResult: print,
      onError: (error) => note(`pull: ${error instanceof Error ? error.message : String(error)}`),
    }).catch((error) => {
      note(error instanceof ConsumeError ? error.message : String(error));
      process.exit(1);
    });
    return;
  }
  note(
    source
      ? `listening on ${url}; each event prints here (Ctrl-C stops)`
      : `listening on ${url} with the given secret; point an endpoint there (Ctrl-C stops)`,
  );
}
