// Generated from verify.ts by scripts/build-snippet.ts (npm run snippet:build). Do not edit:
// change verify.ts and rebuild. Same code, with the TypeScript types written as JSDoc.
// @ts-check

// outboxd receiver snippet: checks that a webhook was signed by outboxd (Standard Webhooks) and
// applies each event at most once, never after a newer one of its aggregate. Paste this one
// file: no dependencies, Web Crypto only, for Bun, Deno, Cloudflare Workers and TypeScript
// builds (verify.js is the same code for Node.js >= 20). Guide: docs/receivers.md.
//
//   const event = await verifyWebhook({ headers: req.headers, body: rawBody }, SECRET);
//   const { result } = await applyOnce(event, store, (event, tx) => save(tx, event.data));
//   return Response.json({ result }); // 2xx for "duplicate" and "stale" too, or outboxd retries
//
// Or, with no public URL at all, fetch the same events from a pull endpoint (DESIGN §12):
//
//   await consume({ url: OUTBOXD_URL, token: CONSUME_TOKEN, endpoint: "ep_…", store,
//     apply: (event, tx) => save(tx, event.data) });

/**
 * The event in a delivery's body. `id` is also the webhook-id header, the same on every retry;
 * `sequence` counts 1, 2, 3, … per `aggregate` (e.g. "returns/r-123"), and is 0 in the
 * "outboxd.ping" that an endpoint test sends; `previousSequence` is the aggregate's latest earlier
 * sequence that was sent to this endpoint at all (its type patterns, filter or explicit
 * endpoints leave gaps), null for none; `timestamp` is the commit time (RFC 3339); `data` is the
 * payload given at commit.
 * @typedef {object} OutboxEvent
 * @property {string} id
 * @property {string} type
 * @property {string} timestamp
 * @property {string} aggregate
 * @property {number} sequence
 * @property {number | null} [previousSequence] Absent in bodies from servers before it.
 * @property {unknown} data
 */

/**
 * A delivery as your HTTP framework hands it over.
 * @typedef {object} WebhookRequest
 * @property {Headers | Record<string, string | string[] | undefined>} headers A Fetch `Headers` or a plain object such as Node's `req.headers`; names are case-insensitive.
 * @property {string | Uint8Array} body The body exactly as received, never re-serialised JSON: the signature covers these bytes.
 */

/**
 * Options of verifyWebhook.
 * @typedef {object} VerifyOptions
 * @property {number} [toleranceSeconds] Largest accepted clock difference between outboxd and this receiver, in seconds (300).
 * @property {Date | number} [now] The current time as a Date or epoch milliseconds, for tests.
 */

/**
 * Why a delivery was refused; a malformed webhook-timestamp counts as missing_header.
 * @typedef {"missing_header" | "timestamp_too_old" | "timestamp_in_future" | "bad_signature" | "bad_body"} WebhookErrorCode
 */

/**
 * A delivery to refuse (answer 400); outboxd retries it until its deadline, then dead-letters it.
 */
export class WebhookError extends Error {
  /** @type {WebhookErrorCode} */
  code;
  /**
   * @param {WebhookErrorCode} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = "WebhookError";
    this.code = code;
  }
}

/**
 * Returns the event of a delivery that outboxd signed within the tolerance, or throws a
 * WebhookError. A misconfigured secret throws a TypeError instead: no retry can fix it. During
 * a rotation pass both secrets: outboxd signs with every active secret and any match passes.
 * @param {WebhookRequest} request
 * @param {string | readonly string[]} secrets
 * @param {VerifyOptions} [options={}]
 * @returns {Promise<OutboxEvent>}
 */
export async function verifyWebhook(request, secrets, options = {}) {
  const keys = [secrets].flat();
  if (keys.length === 0) throw new TypeError("verifyWebhook needs at least one whsec_ secret");
  const id = header(request.headers, "webhook-id");
  const stamp = header(request.headers, "webhook-timestamp");
  const offered = header(request.headers, "webhook-signature").split(" ");
  const seconds = Number(stamp);
  if (!Number.isSafeInteger(seconds) || String(seconds) !== stamp) {
    throw new WebhookError("missing_header", "webhook-timestamp is not integer seconds since the epoch");
  }
  // Before the signature: a captured delivery replayed later is refused however well signed.
  const age = Math.floor(Number(options.now ?? Date.now()) / 1000) - seconds;
  const tolerance = options.toleranceSeconds ?? 300;
  if (age > tolerance) throw new WebhookError("timestamp_too_old", `webhook-timestamp is ${age} s old`);
  if (-age > tolerance) throw new WebhookError("timestamp_in_future", `webhook-timestamp is ${-age} s ahead`);
  const body = typeof request.body === "string" ? request.body : new TextDecoder().decode(request.body);
  for (const secret of keys) {
    const expected = `v1,${await hmac(secret, `${id}.${seconds}.${body}`)}`;
    if (offered.some((entry) => timingSafeEqual(entry, expected))) return parseEvent(body, id);
  }
  throw new WebhookError("bad_signature", "no webhook-signature entry matches the secret(s)");
}

/**
 * Fetch `Headers` match names case-insensitively themselves; a plain object is searched, as a
 * hand-made one may say "Webhook-Id". Node gives a repeated header as an array.
 * @param {WebhookRequest["headers"]} headers
 * @param {string} name
 * @returns {string}
 */
function header(headers, name) {
  const value =
    typeof headers.get === "function"
      ? headers.get(name)
      : Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const text = (Array.isArray(value) ? value.join(" ") : (value ?? "")).trim();
  if (!text) throw new WebhookError("missing_header", `missing ${name} header`);
  return text;
}

/**
 * A secret is "whsec_" + base64 of the key bytes, and the HMAC key is those bytes.
 * @param {string} secret
 * @param {string} message
 * @returns {Promise<string>}
 */
async function hmac(secret, message) {
  let key = new Uint8Array();
  try {
    const base64 = secret.startsWith("whsec_") ? secret.slice(6) : secret;
    key = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  } catch {}
  if (key.length === 0) throw new TypeError("a webhook secret is whsec_ followed by base64 key bytes");
  const algorithm = { name: "HMAC", hash: "SHA-256" };
  const cryptoKey = await crypto.subtle.importKey("raw", key, algorithm, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", cryptoKey, new TextEncoder().encode(message));
  return btoa(String.fromCharCode(...new Uint8Array(mac)));
}

/**
 * Looks at every character whatever the first difference, so the time taken does not tell a
 * forger how much of a guessed signature was right.
 * @param {string} a
 * @param {string} b
 * @returns {boolean}
 */
function timingSafeEqual(a, b) {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Runs on a verified body only: checks the fields applyOnce relies on, and that the body is the
 * event the webhook-id header names.
 * @param {string} body
 * @param {string} id
 * @returns {OutboxEvent}
 */
function parseEvent(body, id) {
  let event = null;
  try {
    event = JSON.parse(body);
  } catch {}
  const { type, timestamp, aggregate, sequence } = event ?? {};
  const strings = [type, timestamp, aggregate].every((field) => typeof field === "string");
  if (typeof event !== "object" || !event || event.id !== id || !strings || !("data" in event)) {
    throw new WebhookError("bad_body", "body is not the outboxd event that webhook-id names");
  }
  if (!Number.isSafeInteger(sequence) || Number(sequence) < 0) {
    throw new WebhookError("bad_body", "event sequence is not a non-negative integer");
  }
  const previous = event.previousSequence;
  if (previous != null && (!Number.isSafeInteger(previous) || Number(previous) < 0)) {
    throw new WebhookError("bad_body", "event previousSequence is not null or a non-negative integer");
  }
  return event;
}

/**
 * What the inbox keeps per aggregate: the last applied event.
 * @typedef {object} InboxEntry
 * @property {number} sequence
 * @property {string} eventId
 */

/**
 * What applyOnce did: "duplicate" means this event (or its sequence) was applied before,
 * "stale" that a newer one was. `missed` counts the sequences skipped before this one: 0
 * normally, more when older events were dead-lettered, this receiver started late, or they were
 * never meant for this endpoint. `missedForEndpoint` tells the last case apart: true only when
 * an event that was sent to this endpoint (its `previousSequence`) was never applied here.
 * @typedef {object} ApplyResult
 * @property {"applied" | "duplicate" | "stale"} result
 * @property {number} missed
 * @property {boolean} missedForEndpoint
 */

/**
 * Where applyOnce keeps, per aggregate, the last applied sequence and event id. `Tx` is what
 * your database's transaction hands out (a connection, a client): get, put and your apply all
 * receive it, so they run in that one transaction. memoryStore() is a store; docs/receivers.md
 * builds SQLite and Postgres ones from INBOX_SQL.
 * @template [Tx=unknown]
 * @typedef {object} InboxStore
 * @property {<T>(aggregate: string, fn: (tx: Tx) => Promise<T>) => Promise<T>} transaction Runs `fn` as one transaction: commit when it resolves, roll back when it throws.
 * @property {(tx: Tx, aggregate: string) => InboxEntry | null | undefined | Promise<InboxEntry | null | undefined>} get The aggregate's last applied entry, if any (INBOX_SQL.*.get).
 * @property {(tx: Tx, aggregate: string, entry: InboxEntry) => boolean | Promise<boolean>} put Records `entry` unless its sequence or a later one is there; true if it did (INBOX_SQL.*.put).
 */

/**
 * Runs `apply` for a verified event unless this event or a newer one of its aggregate was
 * applied before. `apply` runs inside the store's transaction with its `tx`, so the change and
 * the recorded sequence commit together or not at all; if it throws, the error propagates
 * (answer 5xx and outboxd retries). Answer 2xx with the result for "duplicate" and "stale" too.
 * @template Tx
 * @param {OutboxEvent} event
 * @param {InboxStore<Tx>} store
 * @param {(event: OutboxEvent, tx: Tx) => unknown} apply
 * @returns {Promise<ApplyResult>}
 */
export async function applyOnce(event, store, apply) {
  return store.transaction(event.aggregate, async (tx) => {
    const last = await store.get(tx, event.aggregate);
    const seen = compare(event, last);
    if (seen) return { result: seen, missed: 0, missedForEndpoint: false };
    // Claim the sequence before applying: a concurrent delivery of the same event then waits for
    // this row (Postgres) or the write lock (SQLite) and finds it taken instead of applying twice.
    if (!(await store.put(tx, event.aggregate, { sequence: event.sequence, eventId: event.id }))) {
      const result = compare(event, await store.get(tx, event.aggregate)) ?? "stale";
      return { result, missed: 0, missedForEndpoint: false };
    }
    await apply(event, tx);
    const applied = Number(last?.sequence ?? 0);
    return {
      result: "applied",
      missed: Math.max(0, event.sequence - applied - 1),
      missedForEndpoint: event.previousSequence != null && event.previousSequence > applied,
    };
  });
}

/**
 * Number(): Postgres drivers return BIGINT columns as strings.
 * @param {OutboxEvent} event
 * @param {InboxEntry | null | undefined} last
 * @returns {"duplicate" | "stale" | undefined}
 */
function compare(event, last) {
  if (!last) return;
  const sequence = Number(last.sequence);
  if (last.eventId === event.id || sequence === event.sequence) return "duplicate";
  return event.sequence < sequence ? "stale" : undefined;
}

/**
 * An inbox in this process's memory, for tests, demos and receivers whose state is in memory
 * too: it forgets on restart. Events of one aggregate run one at a time, as a row lock would
 * make them, and a throwing `apply` leaves no record, as a rollback would.
 * @returns {InboxStore<undefined>}
 */
export function memoryStore() {
  const entries = new Map();
  const queues = new Map();
  return {
    transaction(aggregate, fn) {
      const result = (queues.get(aggregate) ?? Promise.resolve()).then(async () => {
        const saved = entries.get(aggregate);
        try {
          return await fn(undefined);
        } catch (error) {
          if (saved) entries.set(aggregate, saved);
          else entries.delete(aggregate);
          throw error;
        }
      });
      const settled = result.catch(() => null);
      queues.set(aggregate, settled);
      return result;
    },
    get: (_tx, aggregate) => entries.get(aggregate),
    put(_tx, aggregate, entry) {
      const last = entries.get(aggregate);
      if (last && last.sequence >= entry.sequence) return false;
      entries.set(aggregate, entry);
      return true;
    },
  };
}

/**
 * The inbox as a table in your own database, so that recording a sequence and applying its
 * change are one transaction. Put `create` in your migrations. `get` takes (aggregate); `put`
 * takes (aggregate, sequence, eventId) and writes only a newer sequence, so its row count
 * (SQLite `changes`, Postgres `rowCount`) says whether this delivery won. Begin the transaction
 * with BEGIN IMMEDIATE on SQLite; on Postgres the default READ COMMITTED is right (the upsert
 * waits for a concurrent one on the same aggregate, then re-checks its WHERE).
 */
export const INBOX_SQL = {
  sqlite: {
    create:
      "CREATE TABLE outboxd_inbox (aggregate TEXT PRIMARY KEY, sequence INTEGER NOT NULL, event_id TEXT NOT NULL)",
    get: `SELECT sequence, event_id AS "eventId" FROM outboxd_inbox WHERE aggregate = ?`,
    put: `INSERT INTO outboxd_inbox (aggregate, sequence, event_id) VALUES (?, ?, ?)
      ON CONFLICT (aggregate) DO UPDATE SET sequence = excluded.sequence, event_id = excluded.event_id
      WHERE excluded.sequence > outboxd_inbox.sequence`,
  },
  postgres: {
    create:
      "CREATE TABLE outboxd_inbox (aggregate TEXT PRIMARY KEY, sequence BIGINT NOT NULL, event_id TEXT NOT NULL)",
    get: `SELECT sequence, event_id AS "eventId" FROM outboxd_inbox WHERE aggregate = $1`,
    put: `INSERT INTO outboxd_inbox (aggregate, sequence, event_id) VALUES ($1, $2, $3)
      ON CONFLICT (aggregate) DO UPDATE SET sequence = excluded.sequence, event_id = excluded.event_id
      WHERE excluded.sequence > outboxd_inbox.sequence`,
  },
};

/**
 * Options of consume().
 * @template Tx
 * @typedef {object} ConsumeOptions
 * @property {string} url outboxd's base URL, e.g. "https://outboxd.example.com".
 * @property {string} token A token with the `consume` scope.
 * @property {string} endpoint The pull endpoint's id (ep_…).
 * @property {InboxStore<Tx>} store
 * @property {(event: OutboxEvent, tx: Tx) => unknown} apply Your change, as for applyOnce; if it throws, the delivery is nacked and comes again later.
 * @property {number} [max] Deliveries per poll, 1-500 (100).
 * @property {string} [wait] How long a poll waits for work, up to "60s" ("20s").
 * @property {string} [lease] How long each delivery is leased to this consumer, "1s" to "15m" ("60s").
 * @property {AbortSignal} [signal] Abort to stop: the batch in hand is finished and answered first.
 * @property {(event: OutboxEvent, result: ApplyResult) => void} [onResult] Each delivery's outcome, or an error that consume() recovers from by itself (it retries).
 * @property {(error: unknown) => void} [onError]
 * @property {typeof fetch} [fetch] The fetch to use (a proxy, a test); globalThis.fetch by default.
 */

/**
 * A refusal from outboxd that no retry can fix (a wrong token, endpoint or option).
 */
export class ConsumeError extends Error {
  /** @type {number} */
  status;
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.name = "ConsumeError";
    this.status = status;
  }
}

/**
 * @typedef {object} Pulled
 * @property {string} deliveryId
 * @property {string} leaseToken
 * @property {OutboxEvent} event
 */

/**
 * Polls a pull endpoint, applies each event with applyOnce, and acks it (nacks it if `apply`
 * threw), until `signal` aborts. Events arrive in order per aggregate and at most one per
 * aggregate at a time; a duplicate (a lease that ran out after you applied) is recognised by the
 * store and acked without applying. Network errors and 5xx are retried with backoff; a 4xx
 * throws a ConsumeError. Trust comes from HTTPS and the token: pulled events are not signed.
 * @template Tx
 * @param {ConsumeOptions<Tx>} options
 * @returns {Promise<void>}
 */
export async function consume(options) {
  const call = options.fetch ?? fetch;
  const base = `${options.url.replace(/\/+$/, "")}/v1/endpoints/${encodeURIComponent(options.endpoint)}`;
  const poll = { max: options.max ?? 100, wait: options.wait ?? "20s", lease: options.lease ?? "60s" };
  let pause = 0;
  while (!options.signal?.aborted) {
    let batch;
    try {
      batch = (await postJson(call, `${base}/poll`, options.token, poll, options.signal)).data ?? [];
      pause = 0;
    } catch (error) {
      if (options.signal?.aborted) return;
      if (error instanceof ConsumeError) throw error;
      options.onError?.(error);
      // Back off from 1 s to 30 s while outboxd is unreachable.
      pause = Math.min(30000, Math.max(1000, pause * 2));
      await new Promise((resolve) => setTimeout(resolve, pause));
      continue;
    }
    const acks = [];
    const nacks = [];
    for (const { deliveryId, leaseToken, event } of batch) {
      try {
        const result = await applyOnce(event, options.store, options.apply);
        acks.push({ deliveryId, leaseToken });
        options.onResult?.(event, result);
      } catch (error) {
        nacks.push({ deliveryId, leaseToken });
        options.onError?.(error);
      }
    }
    if (batch.length === 0) continue;
    try {
      await postJson(call, `${base}/ack`, options.token, { acks, nacks }, undefined);
    } catch (error) {
      if (error instanceof ConsumeError) throw error;
      // The leases run out and the events come again; applyOnce turns them into duplicates.
      options.onError?.(error);
    }
  }
}

/**
 * POSTs JSON to outboxd and returns the answer; a 4xx other than 429 throws a ConsumeError.
 * @param {typeof fetch} call
 * @param {string} url
 * @param {string} token
 * @param {unknown} body
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<{ data?: Pulled[] }>}
 */
async function postJson(call, url, token, body, signal) {
  const response = await call(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (response.ok) return JSON.parse(text);
  const message = `outboxd answered ${response.status} to ${url}: ${text.slice(0, 500)}`;
  // 429 and 5xx pass; other 4xx are this consumer's configuration.
  if (response.status >= 400 && response.status < 500 && response.status !== 429) {
    throw new ConsumeError(response.status, message);
  }
  throw new Error(message);
}
