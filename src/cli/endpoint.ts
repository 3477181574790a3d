// `outboxd endpoint …`: an endpoint's controls from the command line (DESIGN §19), through the
// HTTP API of the outboxd at --url (or OUTBOXD_URL) with the token in OUTBOXD_TOKEN, so the API's
// validation, system events and ledger apply exactly as they do to any client.
//   outboxd endpoint list
//   outboxd endpoint show ID
//   outboxd endpoint set ID [--rate-limit N[/BURST]|none] [--retry-schedule 5s,30s,…|none]
//                          [--disable-after 5d|never] [--filter JSON|none] [--disabled true|false]
//   outboxd endpoint enable ID
//   outboxd endpoint recover ID --since TIME [--until TIME] [--deliver-within DURATION]
import { CommandError, httpBaseUrl, option, UsageError } from "./args.ts";

const USAGE = "usage: OUTBOXD_TOKEN=otk_… outboxd endpoint list|show|set|enable|recover … --url URL";

function baseUrl(args: string[]): URL {
  const base = option(args, "url") ?? process.env.OUTBOXD_URL;
  if (!base) throw new UsageError(`${USAGE} (or OUTBOXD_URL)`);
  return httpBaseUrl(base);
}

/** The PATCH body of `set`: only the options given; `none` removes a control. */
export function controlsFromOptions(args: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const rate = option(args, "rate-limit");
  if (rate !== undefined) {
    if (rate === "none") body.rateLimit = null;
    else {
      const match = /^(\d+)(?:\/(\d+))?$/.exec(rate);
      if (!match) throw new UsageError("--rate-limit takes N or N/BURST (per second), or none");
      body.rateLimit = { perSecond: Number(match[1]), ...(match[2] ? { burst: Number(match[2]) } : {}) };
    }
  }
  const schedule = option(args, "retry-schedule");
  if (schedule !== undefined)
    body.retrySchedule = schedule === "none" ? null : schedule.split(",").map((s) => s.trim());
  const after = option(args, "disable-after");
  if (after !== undefined) body.disableAfter = after;
  const filter = option(args, "filter");
  if (filter !== undefined) {
    if (filter === "none") body.filter = null;
    else {
      try {
        body.filter = JSON.parse(filter);
      } catch {
        throw new UsageError("--filter takes a JSON array of conditions, or none");
      }
    }
  }
  const disabled = option(args, "disabled");
  if (disabled !== undefined) {
    if (disabled !== "true" && disabled !== "false") throw new UsageError("--disabled takes true or false");
    body.disabled = disabled === "true";
  }
  if (Object.keys(body).length === 0)
    throw new UsageError("set needs --rate-limit, --retry-schedule, --disable-after, --filter or --disabled");
  return body;
}

function idOf(args: string[], verb: string): string {
  const id = args[1];
  if (!id || id.startsWith("--")) throw new UsageError(`outboxd endpoint ${verb} ID`);
  return encodeURIComponent(id);
}

export async function endpointCommand(args: string[]): Promise<number> {
  const verb = args[0];
  const url = baseUrl(args);
  const token = process.env.OUTBOXD_TOKEN?.trim();
  if (!token)
    throw new UsageError("OUTBOXD_TOKEN must hold an API token (read to list and show, admin to change)");
  let method = "GET";
  let path: string;
  let body: unknown;
  switch (verb) {
    case "list":
      path = "/v1/endpoints?limit=500";
      break;
    case "show":
      path = `/v1/endpoints/${idOf(args, verb)}`;
      break;
    case "set":
      method = "PATCH";
      path = `/v1/endpoints/${idOf(args, verb)}`;
      body = controlsFromOptions(args);
      break;
    case "enable":
      method = "POST";
      path = `/v1/endpoints/${idOf(args, verb)}/enable`;
      break;
    case "recover": {
      method = "POST";
      path = `/v1/endpoints/${idOf(args, verb)}/recover`;
      const since = option(args, "since");
      if (!since)
        throw new UsageError("outboxd endpoint recover ID --since TIME [--until TIME] [--deliver-within D]");
      body = { since, until: option(args, "until"), deliverWithin: option(args, "deliver-within") };
      break;
    }
    default:
      throw new UsageError(USAGE);
  }
  const response = await fetch(new URL(path, url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).catch((error: unknown) => {
    throw new CommandError(
      `could not reach ${url.origin}: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const answer = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!response.ok) {
    const errors = (answer?.errors as { pointer: string; detail: string }[] | undefined) ?? [];
    const detail =
      errors.length > 0 ? errors.map((e) => `${e.pointer}: ${e.detail}`).join("; ") : answer?.detail;
    throw new CommandError(`${response.status}: ${String(detail ?? response.statusText)}`);
  }
  console.log(JSON.stringify(answer, null, 2));
  return 0;
}
