// Which endpoint `outboxd listen` receives from, found or registered over outboxd's HTTP API
// with a token: the webhook endpoint pointing at this listener (registered once, reused on the
// next start), or a pull endpoint when that outboxd refuses local webhook URLs.
import { CommandError, UsageError } from "./args.ts";

/** What the listener needs: a webhook's secrets, or a pull endpoint to consume. */
export type Source = { kind: "webhook"; id: string; secrets: string[] } | { kind: "pull"; id: string };

/** The description that marks the endpoints `outboxd listen` registered. */
export const LISTEN_DESCRIPTION = "outboxd listen";

interface EndpointAnswer {
  id: string;
  kind: "webhook" | "pull";
  url: string | null;
  description: string | null;
  disabled: boolean;
  secret?: string;
}

/** outboxd's HTTP API with one token; failures become one-line command errors. */
export class Api {
  constructor(
    readonly base: string,
    readonly token: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new CommandError(
        `cannot reach outboxd at ${this.base}: start it (npm start), set OUTBOXD to its URL, or pass --secret to only verify`,
      );
    }
    const data = (await response.json().catch(() => ({}))) as T;
    if (response.status === 401) {
      throw new UsageError(
        `outboxd at ${this.base} refused the token (401): set OUTBOXD_TOKEN to a token of that outboxd`,
      );
    }
    if (response.status === 403) {
      throw new UsageError(
        `the token may not ${method} ${path} (403): outboxd listen needs an admin token (or consume, for a pull endpoint)`,
      );
    }
    return { status: response.status, data };
  }

  async mustCall<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { status, data } = await this.call<T>(method, path, body);
    if (status >= 300) {
      const detail = (data as { detail?: string; errors?: { detail: string }[] }) ?? {};
      throw new CommandError(
        `outboxd answered ${status} to ${method} ${path}: ${detail.errors?.[0]?.detail ?? detail.detail ?? "no detail"}`,
      );
    }
    return data;
  }

  async *endpoints(): AsyncGenerator<EndpointAnswer> {
    let after: string | null = null;
    do {
      const query: string = after === null ? "" : `&after=${encodeURIComponent(after)}`;
      const page = await this.mustCall<{ data: EndpointAnswer[]; next: string | null }>(
        "GET",
        `/v1/endpoints?limit=100${query}`,
      );
      yield* page.data;
      after = page.next;
    } while (after !== null);
  }
}

/** `--endpoint ID`: that endpoint, a webhook (its secrets are read) or a pull endpoint. */
export async function namedSource(
  api: Api,
  id: string,
  url: string,
  note: (line: string) => void,
): Promise<Source> {
  const { status, data } = await api.call<EndpointAnswer>("GET", `/v1/endpoints/${encodeURIComponent(id)}`);
  if (status === 404) throw new UsageError(`no endpoint ${id} at ${api.base}`);
  if (status >= 300) throw new CommandError(`outboxd answered ${status} to GET /v1/endpoints/${id}`);
  if (data.kind === "pull") return { kind: "pull", id };
  if (data.url !== url) {
    note(`endpoint ${id} sends to ${data.url}, not here: PATCH its url to ${url} to receive its webhooks`);
  }
  return { kind: "webhook", id, secrets: await secretsOf(api, id) };
}

/**
 * The webhook endpoint for `url` registered before, or a new one; when outboxd refuses a local
 * URL (OUTBOXD_ALLOW_PRIVATE_ENDPOINTS off), a pull endpoint instead, also reused.
 */
export async function registeredSource(api: Api, url: string, note: (line: string) => void): Promise<Source> {
  let pull: EndpointAnswer | undefined;
  for await (const endpoint of api.endpoints()) {
    if (endpoint.kind === "webhook" && endpoint.url === url && !endpoint.disabled) {
      note(`receiving for endpoint ${endpoint.id} (registered before, sends to ${url})`);
      return { kind: "webhook", id: endpoint.id, secrets: await secretsOf(api, endpoint.id) };
    }
    if (endpoint.kind === "pull" && endpoint.description === LISTEN_DESCRIPTION && !endpoint.disabled) {
      pull ??= endpoint;
    }
  }
  const created = await api.call<EndpointAnswer & { errors?: { pointer: string; detail: string }[] }>(
    "POST",
    "/v1/endpoints",
    { url, description: LISTEN_DESCRIPTION },
  );
  if (created.status === 201 && created.data.secret) {
    note(`registered endpoint ${created.data.id}: outboxd sends every event to ${url}`);
    return { kind: "webhook", id: created.data.id, secrets: [created.data.secret] };
  }
  const refusedUrl = created.status === 422 && created.data.errors?.some((e) => e.pointer === "/url");
  if (!refusedUrl) {
    throw new CommandError(`outboxd answered ${created.status} to POST /v1/endpoints`);
  }
  // This outboxd sends webhooks to public https URLs only: fetch the events instead.
  note(
    `outboxd at ${api.base} sends webhooks to public https URLs only (OUTBOXD_ALLOW_PRIVATE_ENDPOINTS=1 allows ${url}); pulling instead`,
  );
  if (pull) {
    note(`receiving for pull endpoint ${pull.id} (registered before)`);
    return { kind: "pull", id: pull.id };
  }
  const made = await api.mustCall<EndpointAnswer>("POST", "/v1/endpoints", {
    kind: "pull",
    description: LISTEN_DESCRIPTION,
  });
  note(`registered pull endpoint ${made.id}: every event is fetched from outboxd`);
  return { kind: "pull", id: made.id };
}

async function secretsOf(api: Api, id: string): Promise<string[]> {
  const { secret, previous } = await api.mustCall<{ secret: string; previous: string[] }>(
    "GET",
    `/v1/endpoints/${encodeURIComponent(id)}/secret`,
  );
  return [secret, ...previous];
}
