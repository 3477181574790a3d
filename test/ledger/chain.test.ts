// The hash chain under concurrent writers over real HTTP: group commits, failing commits inside a
// group, idempotent replays. seq stays gap-free in apply order and every hash follows DESIGN §13.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { canonicalJson } from "../../src/lib/canonical-json.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
  await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/hook" });
});
afterAll(async () => {
  await server.stop();
});

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

async function chain() {
  const links: { seq: number; commitId: string; hash: string; previousHash: string; at: string }[] = [];
  let after: string | null = null;
  do {
    const page = await server.request(
      "GET",
      `/v1/ledger/commits?limit=100${after === null ? "" : `&after=${after}`}`,
    );
    expect(page.status).toBe(200);
    links.push(...page.body.data);
    after = page.body.next;
  } while (after !== null);
  return links;
}

test("many parallel commits, some failing inside their group: seq gap-free, every link holds, verify passes", async () => {
  const N = 240;
  const requests = Array.from({ length: N }, (_, i) => {
    if (i % 6 === 5) {
      // Fails its version check inside whatever group commit it lands in.
      return server.request("POST", "/v1/commits", {
        records: [{ collection: "orders", id: `o-${i}`, expectedVersion: 7, data: { i } }],
      });
    }
    return server.request(
      "POST",
      "/v1/commits",
      {
        records: [
          { collection: "orders", id: `o-${i}`, data: { i } },
          { collection: "hot", id: "counter", data: { last: i } },
        ],
        events: [{ type: "order.changed", aggregate: `orders/o-${i}`, payload: { i, "10": "x", "2": "y" } }],
      },
      { "idempotency-key": `k-${i}` },
    );
  });
  const answers = await Promise.all(requests);
  const committed = answers.filter((a) => a.status === 201);
  expect(answers.filter((a) => a.status === 409)).toHaveLength(N / 6);
  expect(committed).toHaveLength(N - N / 6);
  // Retries answered from the stored response add nothing to the chain.
  const replay = await server.request(
    "POST",
    "/v1/commits",
    {
      records: [
        { collection: "orders", id: "o-0", data: { i: 0 } },
        { collection: "hot", id: "counter", data: { last: 0 } },
      ],
      events: [{ type: "order.changed", aggregate: "orders/o-0", payload: { i: 0, "10": "x", "2": "y" } }],
    },
    { "idempotency-key": "k-0" },
  );
  expect(replay.headers.get("idempotent-replayed")).toBe("true");

  const head = await server.request("GET", "/v1/ledger");
  expect(head.status).toBe(200);
  const links = await chain();
  expect(head.body.commits).toBe(links.length);
  expect(head.body.head).toEqual({
    seq: links.length - 1,
    commitId: links.at(-1)?.commitId,
    hash: links.at(-1)?.hash,
    at: links.at(-1)?.at,
  });
  expect(links.map((l) => l.seq)).toEqual(links.map((_, i) => i));
  // A new database: no genesis commit, the first commit is seq 0 after 64 zeros.
  expect(links[0]?.commitId).not.toBe("cmt_genesis");
  expect(links[0]?.previousHash).toBe("0".repeat(64));
  for (let i = 1; i < links.length; i++) expect(links[i]?.previousHash).toBe(links[i - 1]?.hash as string);
  // Exactly the commits that succeeded are chained, each once.
  const chained = links.map((l) => l.commitId);
  expect(new Set(chained).size).toBe(chained.length);
  expect(chained.filter((id) => !committed.some((c) => c.body.commitId === id))).toEqual([]);
  expect(committed.length).toBe(chained.length);

  const verified = await server.outboxd.db.driver.read(verifyLedger());
  expect(verified).toMatchObject({ ok: true, commits: links.length, head: links.at(-1)?.hash });
});

test("a commit's hash is sha256(previousHash + JCS(content)) computed from what the API shows", async () => {
  const payload = { b: [1.5, 1e-7, 100], a: "é", 10: null };
  const deliverAfter = new Date(Math.ceil(Date.now() / 1000) * 1000 + 86_400_000).toISOString();
  const answer = await server.request("POST", "/v1/commits", {
    records: [
      { collection: "zeta", id: "z-1", data: { x: 1, y: { "2": 2, "10": 10 } } },
      { collection: "alpha", id: "a-1", data: { name: "first" } },
      { collection: "alpha", id: "a-0", delete: false, data: { name: "zero" } },
    ],
    events: [
      { type: "thing.done", aggregate: "things/t", payload, deliverAfter },
      { type: "thing.noted", aggregate: "things/t", payload: {} },
    ],
  });
  expect(answer.status).toBe(201);
  const links = await chain();
  const link = links.at(-1);
  expect(link?.commitId).toBe(answer.body.commitId);
  const digest = (value: unknown) => sha256(canonicalJson(value));
  const content = {
    seq: link?.seq,
    commitId: answer.body.commitId,
    tokenId: "tok_env_admin",
    proposalId: null,
    at: link?.at,
    records: [
      { collection: "alpha", id: "a-0", version: 1, deleted: false, dataDigest: digest({ name: "zero" }) },
      { collection: "alpha", id: "a-1", version: 1, deleted: false, dataDigest: digest({ name: "first" }) },
      {
        collection: "zeta",
        id: "z-1",
        version: 1,
        deleted: false,
        dataDigest: digest({ x: 1, y: { "2": 2, "10": 10 } }),
      },
    ],
    events: [
      {
        id: answer.body.events[0].id,
        type: "thing.done",
        aggregate: "things/t",
        sequence: 1,
        payloadDigest: digest(payload),
        deliverAfter,
        deliverBy: answer.body.events[0].deliverBy,
      },
      {
        id: answer.body.events[1].id,
        type: "thing.noted",
        aggregate: "things/t",
        sequence: 2,
        payloadDigest: digest({}),
        deliverAfter: null,
        deliverBy: answer.body.events[1].deliverBy,
      },
    ],
  };
  expect(link?.hash).toBe(sha256((link?.previousHash ?? "") + canonicalJson(content)));
});

test("commits failing after their writes inside a group (an event id taken by another commit): the group runs again without them, seq gap-free, verify passes", async () => {
  const before = await chain();
  const taken = "0193a1f2-0000-7000-8000-00000000c0de";
  const first = await server.request("POST", "/v1/commits", {
    records: [{ collection: "ids", id: "owner", data: { n: 0 } }],
    events: [{ id: taken, type: "id.taken", aggregate: "ids/owner", payload: { n: 0 } }],
  });
  expect(first.status).toBe(201);
  const N = 60;
  const answers = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      server.request("POST", "/v1/commits", {
        // Every fourth writes its record, then finds its event id taken (another payload): 409.
        records: [{ collection: "ids", id: `r-${i}`, data: { i } }],
        events: [
          i % 4 === 3
            ? { id: taken, type: "id.taken", aggregate: `ids/r-${i}`, payload: { n: i } }
            : { type: "id.fresh", aggregate: `ids/r-${i}`, payload: { i } },
        ],
      }),
    ),
  );
  expect(answers.filter((a) => a.status === 409)).toHaveLength(N / 4);
  const committed = answers.filter((a) => a.status === 201);
  expect(committed).toHaveLength(N - N / 4);
  // The refused commits' records were rolled back with them.
  for (const [i, answer] of answers.entries()) {
    const record = await server.request("GET", `/v1/records/ids/r-${i}`);
    expect(record.status).toBe(answer.status === 201 ? 200 : 404);
  }
  const links = await chain();
  expect(links.length).toBe(before.length + 1 + committed.length);
  expect(links.map((l) => l.seq)).toEqual(links.map((_, i) => i));
  for (let i = 1; i < links.length; i++) expect(links[i]?.previousHash).toBe(links[i - 1]?.hash as string);
  expect(await server.outboxd.db.driver.read(verifyLedger())).toMatchObject({
    ok: true,
    commits: links.length,
  });
});
