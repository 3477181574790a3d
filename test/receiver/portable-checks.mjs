// The receiver snippet's behaviour, checked the same way on every runtime it promises: Bun (the
// .ts and the .js, from verify.test.ts), Deno (the .ts, run-deno.mjs) and Node.js 20 (the .js,
// run-node.mjs). Plain JavaScript with no imports at all, so that Deno needs no config and no
// node_modules, and Node needs no TypeScript; signatures are computed here with Web Crypto.
// Time is passed in (`now`), never read from the clock, so every check is deterministic.

export const SECRET = "whsec_b3V0Ym94ZC10ZXN0LXNlY3JldC0zMi1ieXRlcyEhISE="; // "outboxd-test-secret-32-bytes!!!!"
export const OTHER_SECRET = "whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24tdGVzdHM=";
export const ID = "7f0c4d8e-1b2a-4c3d-9e8f-0a1b2c3d4e5f";
export const TIMESTAMP = 1795946400; // 2026-11-29T10:00:00Z
export const NOW = TIMESTAMP * 1000;
export const EVENT = {
  id: ID,
  type: "return.approved",
  timestamp: "2026-11-29T10:00:00.000Z",
  aggregate: "returns/r-123",
  sequence: 4,
  data: { returnId: "r-123" },
};
export const BODY = JSON.stringify(EVENT);
// Derived once with the `standardwebhooks` npm package (1.1.1): new Webhook(SECRET).sign(ID, date, BODY).
export const KNOWN_SIGNATURE = "v1,Gp8M52IjfrW+RQKR6Ww4id5RKROX3vSaplN7RczNPXw=";

/** Signs like outboxd (Standard Webhooks v1): HMAC-SHA256 of `${id}.${timestamp}.${body}`. */
export async function sign(secret, id, timestamp, body) {
  const bytes = Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${btoa(String.fromCharCode(...new Uint8Array(mac)))}`;
}

async function delivery({ secret = SECRET, id = ID, timestamp = TIMESTAMP, body = BODY, signature } = {}) {
  const headers = {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signature ?? (await sign(secret, id, timestamp, body)),
  };
  return { headers, body };
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

async function refuses(promise, code) {
  try {
    await promise;
  } catch (error) {
    if (error?.name === "WebhookError" && error.code === code) return;
    throw new Error(
      `expected WebhookError ${code}, got ${error?.name} ${error?.code ?? ""}: ${error?.message}`,
    );
  }
  throw new Error(`expected WebhookError ${code}, but it verified`);
}

const event = (sequence, id = `evt-${sequence}`, aggregate = "returns/r-123") => ({
  ...EVENT,
  id,
  aggregate,
  sequence,
});

/** Each check gets the snippet module (verify.ts or verify.js) and throws on failure. */
export const checks = [
  [
    "a known-answer vector from the standardwebhooks package verifies and returns the event",
    async (s) => {
      equal(await sign(SECRET, ID, TIMESTAMP, BODY), KNOWN_SIGNATURE, "Web Crypto signature");
      const request = await delivery({ signature: KNOWN_SIGNATURE });
      equal(await s.verifyWebhook(request, SECRET, { now: NOW }), EVENT, "event");
    },
  ],
  [
    "header names are case-insensitive in a Headers object and a plain object",
    async (s) => {
      const { headers, body } = await delivery();
      const mixed = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
      equal(
        await s.verifyWebhook({ headers: new Headers(mixed), body }, SECRET, { now: NOW }),
        EVENT,
        "Headers",
      );
      equal(await s.verifyWebhook({ headers: mixed, body }, SECRET, { now: new Date(NOW) }), EVENT, "object");
    },
  ],
  [
    "the raw body may be bytes (a Buffer or Uint8Array)",
    async (s) => {
      const { headers } = await delivery();
      const bytes = new TextEncoder().encode(BODY);
      equal(await s.verifyWebhook({ headers, body: bytes }, SECRET, { now: NOW }), EVENT, "event");
    },
  ],
  [
    "a tampered body, webhook-id or webhook-timestamp is bad_signature",
    async (s) => {
      const signed = await delivery();
      const re = (headers, body = signed.body) => s.verifyWebhook({ headers, body }, SECRET, { now: NOW });
      await refuses(re(signed.headers, BODY.replace('"sequence":4', '"sequence":5')), "bad_signature");
      await refuses(re(signed.headers, JSON.stringify(JSON.parse(BODY), null, 2)), "bad_signature");
      await refuses(re({ ...signed.headers, "webhook-id": "another-id" }), "bad_signature");
      await refuses(re({ ...signed.headers, "webhook-timestamp": String(TIMESTAMP + 1) }), "bad_signature");
    },
  ],
  [
    "a wrong secret is bad_signature",
    async (s) => {
      await refuses(s.verifyWebhook(await delivery(), OTHER_SECRET, { now: NOW }), "bad_signature");
    },
  ],
  [
    "timestamps beyond the tolerance are timestamp_too_old / timestamp_in_future, at it they pass",
    async (s) => {
      const request = await delivery();
      const at = (now, toleranceSeconds) => s.verifyWebhook(request, SECRET, { now, toleranceSeconds });
      equal((await at(NOW + 300_000)).id, ID, "300 s old");
      equal((await at(NOW - 300_000)).id, ID, "300 s ahead");
      await refuses(at(NOW + 301_000), "timestamp_too_old");
      await refuses(at(NOW - 301_000), "timestamp_in_future");
      await refuses(at(NOW + 11_000, 10), "timestamp_too_old");
    },
  ],
  [
    "a missing, empty or malformed header is missing_header",
    async (s) => {
      const { headers, body } = await delivery();
      for (const name of Object.keys(headers)) {
        const { [name]: _, ...rest } = headers;
        await refuses(s.verifyWebhook({ headers: rest, body }, SECRET, { now: NOW }), "missing_header");
        await refuses(
          s.verifyWebhook({ headers: { ...rest, [name]: " " }, body }, SECRET, { now: NOW }),
          "missing_header",
        );
      }
      for (const stamp of ["1795946400.5", "1.7959464e9", "soon", "-"]) {
        const malformed = { ...headers, "webhook-timestamp": stamp };
        await refuses(s.verifyWebhook({ headers: malformed, body }, SECRET, { now: NOW }), "missing_header");
      }
    },
  ],
  [
    "during a rotation either of two signatures passes, and secrets may be an array",
    async (s) => {
      const both = `${await sign(OTHER_SECRET, ID, TIMESTAMP, BODY)} ${await sign(SECRET, ID, TIMESTAMP, BODY)}`;
      const request = await delivery({ signature: both });
      equal((await s.verifyWebhook(request, SECRET, { now: NOW })).id, ID, "new secret");
      equal((await s.verifyWebhook(request, OTHER_SECRET, { now: NOW })).id, ID, "old secret");
      const old = await delivery({ secret: OTHER_SECRET });
      equal((await s.verifyWebhook(old, [SECRET, OTHER_SECRET], { now: NOW })).id, ID, "array");
      const unknownVersion = await delivery({
        signature: `v2,xyz ${await sign(SECRET, ID, TIMESTAMP, BODY)}`,
      });
      equal((await s.verifyWebhook(unknownVersion, SECRET, { now: NOW })).id, ID, "skips v2");
    },
  ],
  [
    "a validly signed body that is not the named outboxd event is bad_body",
    async (s) => {
      const cases = [
        "not json",
        "[]",
        JSON.stringify({ ...EVENT, id: "other" }),
        JSON.stringify({ ...EVENT, sequence: -1 }),
      ];
      const { data: _, ...noData } = EVENT;
      cases.push(JSON.stringify(noData), JSON.stringify({ ...EVENT, aggregate: 7 }));
      for (const body of cases) {
        await refuses(s.verifyWebhook(await delivery({ body }), SECRET, { now: NOW }), "bad_body");
      }
    },
  ],
  [
    "an endpoint test's outboxd.ping (sequence 0) verifies, and applyOnce answers it without a fuss",
    async (s) => {
      const ping = { ...EVENT, type: "outboxd.ping", aggregate: "outboxd/ping/ep_1", sequence: 0, data: {} };
      const verified = await s.verifyWebhook(await delivery({ body: JSON.stringify(ping) }), SECRET, {
        now: NOW,
      });
      equal(verified, ping, "ping");
      const store = s.memoryStore();
      equal(
        await s.applyOnce(verified, store, () => {}),
        { result: "applied", missed: 0, missedForEndpoint: false },
        "first ping",
      );
      const again = { ...ping, id: "another-ping" };
      equal(
        await s.applyOnce(again, store, () => {}),
        { result: "duplicate", missed: 0, missedForEndpoint: false },
        "next ping",
      );
    },
  ],
  [
    "a misconfigured secret is a TypeError, not a WebhookError",
    async (s) => {
      for (const secrets of [undefined, [], "whsec_", "whsec_!!!not-base64"]) {
        const error = await s.verifyWebhook(await delivery(), secrets, { now: NOW }).catch((e) => e);
        equal(error instanceof TypeError, true, `TypeError for ${JSON.stringify(secrets)}`);
      }
    },
  ],
  [
    "applyOnce: in order applied, redelivery duplicate, older stale, gap counts missed",
    async (s) => {
      const store = s.memoryStore();
      const applied = [];
      const run = (e) => s.applyOnce(e, store, (x) => applied.push(x.sequence));
      equal(await run(event(1)), { result: "applied", missed: 0, missedForEndpoint: false }, "1");
      equal(await run(event(2)), { result: "applied", missed: 0, missedForEndpoint: false }, "2");
      equal(await run(event(2)), { result: "duplicate", missed: 0, missedForEndpoint: false }, "2 again");
      equal(
        await run(event(2, "evt-2-replayed")),
        { result: "duplicate", missed: 0, missedForEndpoint: false },
        "same sequence",
      );
      equal(await run(event(1)), { result: "stale", missed: 0, missedForEndpoint: false }, "1 after 2");
      equal(await run(event(4)), { result: "applied", missed: 1, missedForEndpoint: false }, "4 after 2");
      equal(await run(event(3)), { result: "stale", missed: 0, missedForEndpoint: false }, "3 after 4");
      equal(
        await run(event(9, "evt-9", "returns/r-124")),
        { result: "applied", missed: 8, missedForEndpoint: false },
        "first seen at 9",
      );
      equal(applied, [1, 2, 4, 9], "applied sequences");
    },
  ],
  [
    "applyOnce: previousSequence tells a gap never meant for this endpoint from a lost delivery",
    async (s) => {
      const store = s.memoryStore();
      const run = (sequence, previousSequence) =>
        s.applyOnce({ ...event(sequence), previousSequence }, store, () => {});
      // Sent 1, 3 and 6 (a filter left out 2, 4 and 5): gaps, none missed here.
      equal(await run(1, null), { result: "applied", missed: 0, missedForEndpoint: false }, "1");
      equal(await run(3, 1), { result: "applied", missed: 1, missedForEndpoint: false }, "3 after 1");
      // 6 was sent after 5, which never arrived (dead-lettered): missed for this endpoint.
      equal(await run(7, 5), { result: "applied", missed: 3, missedForEndpoint: true }, "7 after 3, 5 lost");
      equal(await run(7, 5), { result: "duplicate", missed: 0, missedForEndpoint: false }, "7 again");
      // A first delivery whose predecessor was sent but never applied here.
      const fresh = await s.applyOnce(
        { ...event(4, "evt-4", "returns/r-9"), previousSequence: 2 },
        store,
        () => {},
      );
      equal(fresh, { result: "applied", missed: 3, missedForEndpoint: true }, "first seen after a sent one");
    },
  ],
  [
    "applyOnce: concurrent deliveries of one event apply it once",
    async (s) => {
      const store = s.memoryStore();
      let effects = 0;
      const apply = async () => {
        await Promise.resolve();
        effects++;
      };
      const results = await Promise.all(Array.from({ length: 8 }, () => s.applyOnce(event(1), store, apply)));
      equal(results.map((r) => r.result).sort(), ["applied", ...Array(7).fill("duplicate")], "results");
      equal(effects, 1, "effects");
    },
  ],
  [
    "applyOnce: when two deliveries both read before either records (READ COMMITTED), the loser does not apply",
    async (s) => {
      // A store that does not serialise transactions, like Postgres: both gets happen before any put.
      const rows = new Map();
      let reads = 0;
      let bothRead;
      const gate = new Promise((resolve) => {
        bothRead = resolve;
      });
      const store = {
        transaction: (_aggregate, fn) => fn(undefined),
        async get(_tx, aggregate) {
          const row = rows.get(aggregate);
          if (++reads === 2) bothRead();
          await gate;
          return row;
        },
        put(_tx, aggregate, entry) {
          if ((rows.get(aggregate)?.sequence ?? 0) >= entry.sequence) return false;
          rows.set(aggregate, entry);
          return true;
        },
      };
      let effects = 0;
      const results = await Promise.all([1, 2].map(() => s.applyOnce(event(1), store, () => effects++)));
      equal(results.map((r) => r.result).sort(), ["applied", "duplicate"], "results");
      equal(effects, 1, "effects");
    },
  ],
  [
    "applyOnce: a failing apply records nothing, so the retry applies",
    async (s) => {
      const store = s.memoryStore();
      const failure = await s
        .applyOnce(event(1), store, () => {
          throw new Error("receiver database down");
        })
        .catch((e) => e);
      equal(failure.message, "receiver database down", "error propagates");
      equal(
        await s.applyOnce(event(1), store, () => {}),
        { result: "applied", missed: 0, missedForEndpoint: false },
        "retry",
      );
    },
  ],
  [
    "INBOX_SQL: both dialects upsert only a newer sequence",
    async (s) => {
      for (const dialect of ["sqlite", "postgres"]) {
        const { create, get, put } = s.INBOX_SQL[dialect];
        equal(
          [create, get, put].every((sql) => sql.includes("outboxd_inbox")),
          true,
          `${dialect} table`,
        );
        equal(
          /ON CONFLICT \(aggregate\) DO UPDATE[\s\S]*WHERE excluded\.sequence > outboxd_inbox\.sequence/.test(
            put,
          ),
          true,
          dialect,
        );
      }
    },
  ],
];

/** Runs every check against `snippet`, prints one line each and the total; true if all passed. */
export async function runChecks(snippet, runtime) {
  let passed = 0;
  let failed = 0;
  for (const [name, check] of checks) {
    try {
      await check(snippet);
      passed++;
      console.log(`ok - ${name}`);
    } catch (error) {
      failed++;
      console.log(`not ok - ${name}\n  ${error?.stack ?? error}`);
    }
  }
  console.log(`snippet (${runtime}): ${passed} passed, ${failed} failed`);
  return failed === 0;
}
