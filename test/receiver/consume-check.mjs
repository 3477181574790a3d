// consume() against a real outboxd, the same check on every runtime the snippet promises: Bun
// (the .ts and the .js, consume.test.ts), Deno (the .ts, consume-deno.mjs) and Node.js (the .js,
// consume-node.mjs); scripts/test-snippet.sh starts the server for the last two. Plain JavaScript
// with no imports, like portable-checks.mjs.

const AGGREGATES = 5;
const ROUNDS = 4;

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

/**
 * Commits ROUNDS events to each of AGGREGATES aggregates for a new pull endpoint, consumes them
 * with an apply that fails once, and checks that every event was applied once, in order per
 * aggregate; then that a wrong token is a ConsumeError. `url` is outboxd's, `adminToken` an admin's.
 */
export async function checkConsume(snippet, { url, adminToken }) {
  const admin = async (path, body) => {
    const response = await fetch(url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const endpoint = (await admin("/v1/endpoints", { kind: "pull" })).id;
  const token = (await admin("/v1/tokens", { name: "consume-check", scopes: ["consume"] })).token;
  for (let round = 1; round <= ROUNDS; round++) {
    await admin("/v1/commits", {
      events: Array.from({ length: AGGREGATES }, (_, a) => ({
        type: "check.consumed",
        aggregate: `consume/${a}`,
        payload: { round },
        endpoints: [endpoint],
      })),
    });
  }
  const applied = new Map();
  const errors = [];
  let failed = false;
  const stop = new AbortController();
  const timeout = setTimeout(() => stop.abort(), 30_000);
  await snippet.consume({
    url,
    token,
    endpoint,
    store: snippet.memoryStore(),
    max: 3,
    wait: "1s",
    signal: stop.signal,
    apply: (event) => {
      if (!failed && event.aggregate === "consume/0" && event.data.round === 2) {
        failed = true;
        throw new Error("apply failed once");
      }
      applied.set(event.aggregate, [...(applied.get(event.aggregate) ?? []), event.data.round]);
    },
    onResult: () => {
      if ([...applied.values()].flat().length === AGGREGATES * ROUNDS) stop.abort();
    },
    onError: (error) => errors.push(error),
  });
  clearTimeout(timeout);
  for (let a = 0; a < AGGREGATES; a++) {
    equal(applied.get(`consume/${a}`), [1, 2, 3, 4], `rounds applied to consume/${a}, in order`);
  }
  equal(
    errors.map((e) => e.message),
    ["apply failed once"],
    "errors reported",
  );
  let refused = null;
  try {
    await snippet.consume({
      url,
      token: "otk_wrong",
      endpoint,
      store: snippet.memoryStore(),
      apply: () => {},
    });
  } catch (error) {
    refused = error;
  }
  equal([refused?.name, refused?.status], ["ConsumeError", 401], "a wrong token");
}
