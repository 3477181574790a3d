// @outboxd/client: outboxd's HTTP API from TypeScript (DESIGN §14). Types come from the server's
// /openapi.json (src/schema.gen.ts); requests go through openapi-fetch. On top of it: commits
// that choose their own Idempotency-Key and retry only what that key makes safe, problem
// answers as typed OutboxdErrors, and list helpers that follow `next`.
import createFetchClient from "./vendor/openapi-fetch.js";
import { OutboxdError } from "./errors.js";
import { pullClient } from "./pull.js";
import { RETRY_DEFAULTS, retryAfterMs, retryableStatus, retryDelay, sleep, } from "./retry.js";
import { checkHeaderValue, redact, redactedError } from "./secrets.js";
export { OutboxdError } from "./errors.js";
export function createClient(options) {
    checkHeaderValue("the token", options.token);
    const retry = { ...RETRY_DEFAULTS, ...options.retry };
    const api = createFetchClient({
        baseUrl: options.baseUrl.replace(/\/+$/, ""),
        headers: { authorization: `Bearer ${options.token}` },
        ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    async function* list(path, params) {
        const given = (params ?? {});
        let after = given.query?.after;
        do {
            const query = { ...given.query, ...(after ? { after } : {}) };
            // biome-ignore lint/suspicious/noExplicitAny: one generic walk over routes of different shapes
            const { data, error, response } = await api.GET(path, { params: { ...given, query } });
            if (!response.ok)
                throw new OutboxdError(response.status, asObject(error, [options.token]));
            const page = data;
            for (const item of page.data)
                yield item;
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
            const headers = { "idempotency-key": key };
            if (commitOptions.traceparent !== undefined) {
                checkHeaderValue("traceparent", commitOptions.traceparent);
                headers.traceparent = commitOptions.traceparent;
            }
            const signal = commitOptions.signal;
            const data = await withRetries(() => api.POST("/v1/commits", { body, headers, ...(signal ? { signal } : {}) }), retry, signal, [options.token, ...Object.values(headers)]);
            return data;
        },
        list,
        async listAll(path, params) {
            const all = [];
            for await (const item of list(path, params))
                all.push(item);
            return all;
        },
    };
}
/** Sends until an answer that is final: success, a problem that a retry cannot change, or out of tries. */
async function withRetries(send, retry, signal, 
/** The header values sent: cut out of every error's text. */
secrets) {
    for (let attempt = 1;; attempt++) {
        let result;
        try {
            result = await send();
        }
        catch (error) {
            // No answer (connection refused or cut, timeout): the commit may or may not have happened;
            // the same key makes the retry return the first one's answer if it did.
            if (signal?.aborted)
                throw error;
            if (attempt >= retry.attempts) {
                const cause = redactedError(error, secrets);
                throw new OutboxdError(0, { title: "Network error", detail: String(cause) }, { cause });
            }
            await sleep(retryDelay(attempt, null, retry), signal);
            continue;
        }
        const { data, error, response } = result;
        if (response.ok)
            return data;
        const problem = new OutboxdError(response.status, asObject(error, secrets));
        if (!retryableStatus(problem.status, problem.type) || attempt >= retry.attempts)
            throw problem;
        await sleep(retryDelay(attempt, retryAfterMs(response.headers.get("retry-after")), retry), signal);
    }
}
/** A problem body; an answer that is not one (a proxy's text) becomes its detail, secrets cut out. */
function asObject(value, secrets) {
    if (value !== null && typeof value === "object") {
        const body = { ...value };
        for (const field of ["title", "detail"]) {
            const text = body[field];
            if (typeof text === "string")
                body[field] = redact(text, secrets);
        }
        return body;
    }
    return typeof value === "string" && value ? { detail: redact(value, secrets).slice(0, 500) } : {};
}
