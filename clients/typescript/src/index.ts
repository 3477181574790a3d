// @outboxd/client: outboxd's HTTP API from TypeScript (DESIGN §14). Types come from the server's
// /openapi.json (src/schema.gen.ts); requests go through openapi-fetch. On top of it: commits
// that choose their own Idempotency-Key and retry only what that key makes safe, problem
// answers as typed OutboxdErrors, and list helpers that follow `next`.
import createFetchClient, { type Client } from "openapi-fetch";
import { OutboxdError } from "./errors.js";
import { type PullClient, pullClient } from "./pull.js";
import {
  RETRY_DEFAULTS,
  type RetryOptions,
  retryAfterMs,
  retryableStatus,
  retryDelay,
  sleep,
} from "./retry.js";
import type { components, operations, paths } from "./schema.gen.js";
import { checkHeaderValue, redact, redactedError } from "./secrets.js";

export { type FieldError, OutboxdError } from "./errors.js";
export type {
  AckResult,
  Lease,
  PollOptions,
  PollResult,
  PullClient,
  Pulled,
  PulledEvent,
  StreamOptions,
} from "./pull.js";
export type { RetryOptions } from "./retry.js";
export type { components, operations, paths };

export interface ClientOptions {
  /** Where outboxd listens, e.g. `https://outboxd.internal:8080`. */
  baseUrl: string;
  /** A bearer token (`otk_…`, or the admin token). */
  token: string;
  /** How commits are retried (default: 5 tries, backoff from 200 ms, waits capped at 30 s). */
  retry?: RetryOptions;
  /** Another fetch (tests, proxies, instrumentation). */
  fetch?: (request: Request) => Promise<Response>;
}

/** The JSON body of a response object, or `unknown` while the document does not describe it. */
type JsonOf<R> = R extends { content: { "application/json": infer T } } ? T : unknown;
/** The generated type where /openapi.json describes it, the contract's shape where it does not. */
type Described<T, Fallback> = unknown extends T ? Fallback : T;

export type CommitBody = components["schemas"]["CommitRequest"];
/** DESIGN §3's commit answer, as /openapi.json describes it. */
export type CommitResult = JsonOf<operations["postCommits"]["responses"][201]>;

export interface CommitOptions {
  /** Defaults to a fresh UUID per call; give your own to make retries across processes safe. */
  idempotencyKey?: string;
  /** A W3C traceparent: outboxd continues that trace and sends it on with the webhooks. */
  traceparent?: string;
  signal?: AbortSignal;
}

/** The GET routes that answer a page (`{data, next}`) and take `after`. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { parameters: { query?: { after?: string } } } } ? P : never;
}[keyof paths];
type ListOperation<P extends ListPath> = paths[P] extends { get: infer O } ? O : never;
type ListParams<P extends ListPath> = ListOperation<P> extends { parameters: infer Q } ? Q : never;
/** One item of a list route's `data`. */
export type ListItem<P extends ListPath> = Described<
  ListOperation<P> extends { responses: { 200: infer R } }
    ? JsonOf<R> extends { data: (infer I)[] }
      ? I
      : unknown
    : unknown,
  Record<string, unknown>
>;

export interface OutboxdClient extends PullClient {
  /** The typed openapi-fetch client (bearer token set) for every route this class does not wrap. */
  readonly api: Client<paths>;
  /**
   * POST /v1/commits. Sends an Idempotency-Key (its own unless given) and retries network
   * errors, 429, 503 and 409 idempotency-in-progress with that same key, honouring Retry-After,
   * so a retry can never commit twice. Any other problem throws OutboxdError at once.
   */
  commit(body: CommitBody, options?: CommitOptions): Promise<CommitResult>;
  /** Every item of a list route, page after page (`next` → `after`), as they are fetched. */
  list<P extends ListPath>(path: P, params?: ListParams<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /** All items of a list route, in one array (mind the size of what you ask for). */
  listAll<P extends ListPath>(path: P, params?: ListParams<P>): Promise<ListItem<P>[]>;
}

export function createClient(options: ClientOptions): OutboxdClient {
  checkHeaderValue("the token", options.token);
  const retry = { ...RETRY_DEFAULTS, ...options.retry };
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { authorization: `Bearer ${options.token}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function* list<P extends ListPath>(path: P, params?: ListParams<P>) {
    const given = (params ?? {}) as { query?: Record<string, unknown>; path?: Record<string, unknown> };
    let after: string | null | undefined = given.query?.after as string | undefined;
    do {
      const query = { ...given.query, ...(after ? { after } : {}) };
      // biome-ignore lint/suspicious/noExplicitAny: one generic walk over routes of different shapes
      const { data, error, response } = await (api.GET as any)(path, { params: { ...given, query } });
      if (!response.ok) throw new OutboxdError(response.status, asObject(error, [options.token]));
      const page = data as { data: ListItem<P>[]; next: string | null };
      for (const item of page.data) yield item;
      after = page.next;
    } while (after);
  }

  return {
    api,
    ...pullClient(api, {
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      token: options.token,
      fetch: options.fetch,
      problem: (status, body) => new OutboxdError(status, asObject(body, [options.token])),
    }),
    async commit(body, commitOptions = {}) {
      const key = commitOptions.idempotencyKey ?? crypto.randomUUID();
      checkHeaderValue("idempotencyKey", key);
      const headers: Record<string, string> = { "idempotency-key": key };
      if (commitOptions.traceparent !== undefined) {
        checkHeaderValue("traceparent", commitOptions.traceparent);
        headers.traceparent = commitOptions.traceparent;
      }
      const signal = commitOptions.signal;
      const data = await withRetries(
        () => api.POST("/v1/commits", { body, headers, ...(signal ? { signal } : {}) }),
        retry,
        signal,
        [options.token, ...Object.values(headers)],
      );
      return data as CommitResult;
    },
    list,
    async listAll(path, params) {
      const all = [];
      for await (const item of list(path, params)) all.push(item);
      return all;
    },
  };
}

/** Sends until an answer that is final: success, a problem that a retry cannot change, or out of tries. */
async function withRetries(
  send: () => Promise<{ data?: unknown; error?: unknown; response: Response }>,
  retry: Required<RetryOptions>,
  signal: AbortSignal | undefined,
  /** The header values sent: cut out of every error's text. */
  secrets: readonly string[],
): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    let result: Awaited<ReturnType<typeof send>>;
    try {
      result = await send();
    } catch (error) {
      // No answer (connection refused or cut, timeout): the commit may or may not have happened;
      // the same key makes the retry return the first one's answer if it did.
      if (signal?.aborted) throw error;
      if (attempt >= retry.attempts) {
        const cause = redactedError(error, secrets);
        throw new OutboxdError(0, { title: "Network error", detail: String(cause) }, { cause });
      }
      await sleep(retryDelay(attempt, null, retry), signal);
      continue;
    }
    const { data, error, response } = result;
    if (response.ok) return data;
    const problem = new OutboxdError(response.status, asObject(error, secrets));
    if (!retryableStatus(problem.status, problem.type) || attempt >= retry.attempts) throw problem;
    await sleep(retryDelay(attempt, retryAfterMs(response.headers.get("retry-after")), retry), signal);
  }
}

/** A problem body; an answer that is not one (a proxy's text) becomes its detail, secrets cut out. */
function asObject(value: unknown, secrets: readonly string[]): Record<string, unknown> {
  if (value !== null && typeof value === "object") {
    const body = { ...(value as Record<string, unknown>) };
    for (const field of ["title", "detail"]) {
      const text = body[field];
      if (typeof text === "string") body[field] = redact(text, secrets);
    }
    return body;
  }
  return typeof value === "string" && value ? { detail: redact(value, secrets).slice(0, 500) } : {};
}
