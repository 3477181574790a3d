// Proposals (DESIGN §10): an agent proposes, a person approves. The four-eyes rule, the atomic
// apply with its version re-check, conflicted / rejected / expired, idempotency in its own
// namespace, pruning, metrics — against a real server and database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type Request } from "../helpers/api.ts";
import { eventsOf, expectProblem, expectStatus } from "../helpers/assertions.ts";
import { waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
/** The test's clock: moved forward to expire and prune without waiting. */
let now = Date.now();
const as: Record<"agent" | "person" | "other" | "reader" | "writer", Request> = {} as never;

async function token(name: string, scopes: string[]): Promise<Request> {
  const created = expectStatus(await server.request("POST", "/v1/tokens", { name, scopes }), 201);
  return apiClient(server.url, created.token);
}

beforeAll(async () => {
  server = await startServer(
    { OUTBOXD_RETENTION: "1h", OUTBOXD_DISPATCH_CRON: "* * * * * *" },
    { clock: () => now },
  );
  as.agent = await token("returns-agent", ["propose", "read"]);
  as.person = await token("alice", ["approve", "read"]);
  as.other = await token("bob", ["approve"]);
  as.reader = await token("auditor", ["read"]);
  as.writer = await token("backend", ["commit"]);
  expectStatus(
    await server.request("PUT", "/v1/event-types/return.approved", {
      schema: {
        type: "object",
        properties: { returnId: { type: "string" }, amount: { type: "integer", minimum: 0 } },
        required: ["returnId"],
      },
    }),
    201,
  );
});
afterAll(async () => {
  await server.stop();
});

/** A return at version 1, and a proposal to approve it (seed 000's flow). */
async function returnAndProposal(id: string, extra: Record<string, unknown> = {}) {
  expectStatus(
    await server.request("PUT", `/v1/records/returns/${id}`, { data: { status: "requested" } }),
    201,
  );
  return expectStatus(
    await as.agent("POST", "/v1/proposals", {
      summary: `Approve return ${id}: item arrived unused, within 30 days.`,
      commit: {
        records: [{ collection: "returns", id, expectedVersion: 1, data: { status: "approved" } }],
        events: [{ type: "return.approved", payload: { returnId: id, amount: 1999 } }],
      },
      ...extra,
    }),
    201,
  );
}

describe("propose", () => {
  test("answers 201 with a pending proposal; nothing is written yet", async () => {
    const proposal = await returnAndProposal("p-shape");
    expect(proposal.id).toStartWith("prp_");
    expect(proposal).toMatchObject({
      status: "pending",
      proposedBy: { tokenName: "returns-agent" },
      decidedAt: null,
      decidedBy: null,
      reason: null,
      result: null,
    });
    expect(proposal.proposedBy.tokenId).toStartWith("tok_");
    expect(Date.parse(proposal.expiresAt) - Date.parse(proposal.createdAt)).toBe(24 * 3_600_000);
    expect(proposal.commit.records[0].data).toEqual({ status: "approved" });
    const record = expectStatus(await server.request("GET", "/v1/records/returns/p-shape"), 200);
    expect(record.data).toEqual({ status: "requested" });
    expect(await eventsOf(server, "returns/p-shape")).toEqual([]);
  });

  test("GET adds each record's current state; the list leaves the commit out and filters by status", async () => {
    const proposal = await returnAndProposal("p-read");
    const detail = expectStatus(await as.person("GET", `/v1/proposals/${proposal.id}`), 200);
    expect(detail.current).toEqual([
      { collection: "returns", id: "p-read", version: 1, data: { status: "requested" }, deleted: false },
    ]);
    const listed = expectStatus(await as.reader("GET", "/v1/proposals?status=pending&limit=500"), 200);
    const item = listed.data.find((p: { id: string }) => p.id === proposal.id);
    expect(item).toBeDefined();
    expect(item.commit).toBeUndefined();
    expect(item.summary).toBe(proposal.summary);
    const approved = expectStatus(await as.reader("GET", "/v1/proposals?status=approved"), 200);
    expect(approved.data.some((p: { id: string }) => p.id === proposal.id)).toBe(false);
    expectProblem(await as.reader("GET", "/v1/proposals?status=maybe"), 422, "/status");
    expectProblem(await as.reader("GET", "/v1/proposals/prp_nope"), 404);
  });

  test("a record never seen shows version 0 and data null", async () => {
    const proposal = expectStatus(
      await as.agent("POST", "/v1/proposals", {
        summary: "Create a customer",
        commit: {
          records: [{ collection: "customers", id: "c-new", expectedVersion: 0, data: { name: "A" } }],
        },
      }),
      201,
    );
    const detail = expectStatus(await as.agent("GET", `/v1/proposals/${proposal.id}`), 200);
    expect(detail.current).toEqual([
      { collection: "customers", id: "c-new", version: 0, data: null, deleted: false },
    ]);
  });

  test("is validated as a commit would be, with pointers under /commit; every write needs expectedVersion", async () => {
    const refused = expectProblem(
      await as.agent("POST", "/v1/proposals", {
        summary: "bad",
        commit: {
          records: [{ collection: "returns", id: "p-bad", data: { status: "approved" } }],
          events: [
            { type: "return.approved", payload: { amount: -5 } },
            { type: "return.approved", payload: { returnId: "x" }, deliverWithin: "0s" },
            { type: "x.y", aggregate: "a/1", endpoints: ["ep_missing"] },
          ],
        },
      }),
      422,
    );
    const pointers = refused.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(
      [
        "/commit/records/0/expectedVersion",
        "/commit/events/0/payload/amount",
        "/commit/events/0/payload/returnId",
        "/commit/events/1/deliverWithin",
        "/commit/events/2/endpoints/0",
      ].sort(),
    );
    expectProblem(await as.agent("POST", "/v1/proposals", { commit: { events: [] } }), 422, "/summary");
    expectProblem(
      await as.agent("POST", "/v1/proposals", { summary: "x", commit: {}, colour: "red" }),
      422,
      "/colour",
    );
    expectProblem(
      await as.agent("POST", "/v1/proposals", {
        summary: "x",
        commit: { events: [{ type: "a.b", aggregate: "a/1" }] },
        expiresIn: "31d",
      }),
      422,
      "/expiresIn",
    );
    expectProblem(await as.agent("POST", "/v1/proposals", { summary: "x", commit: {} }), 422, "/commit");
  });

  test("Idempotency-Key: its own namespace; a retry gets the same proposal; another body is 422", async () => {
    const body = {
      summary: "idempotent",
      commit: { events: [{ type: "idem.proposed", aggregate: "idem/1" }] },
    };
    const key = { "idempotency-key": "agent-run-42" };
    const first = await as.agent("POST", "/v1/proposals", body, key);
    const again = await as.agent("POST", "/v1/proposals", body, key);
    expect(expectStatus(again, 201).id).toBe(expectStatus(first, 201).id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expectProblem(
      await as.agent("POST", "/v1/proposals", { ...body, summary: "other" }, key),
      422,
      "header:Idempotency-Key",
    );
    // The same key on a commit by a token that also proposes is another namespace.
    const writer = await token("writer-proposer", ["commit"]);
    const proposed = expectStatus(await writer("POST", "/v1/proposals", body, key), 201);
    const committed = expectStatus(
      await writer("POST", "/v1/commits", { events: [{ type: "idem.committed", aggregate: "idem/2" }] }, key),
      201,
    );
    expect(committed.commitId).toStartWith("cmt_");
    expect(proposed.id).toStartWith("prp_");
  });
});

describe("approve", () => {
  test("by another token: applied atomically by the approver, deadlines from the approval", async () => {
    const proposal = await returnAndProposal("p-approve");
    now += 60_000;
    const approved = expectStatus(
      await as.person("POST", `/v1/proposals/${proposal.id}/approve`, { reason: "photos checked" }),
      200,
    );
    expect(approved).toMatchObject({
      id: proposal.id,
      status: "approved",
      decidedBy: { tokenName: "alice" },
      reason: "photos checked",
    });
    expect(approved.decidedAt).toBe(new Date(now).toISOString());
    expect(approved.result.commitId).toStartWith("cmt_");
    expect(approved.result.records).toEqual([
      { collection: "returns", id: "p-approve", version: 2, deleted: false },
    ]);
    expect(approved.result.events[0].deliverBy).toBe(new Date(now + 24 * 3_600_000).toISOString());
    const record = expectStatus(await server.request("GET", "/v1/records/returns/p-approve"), 200);
    expect(record).toMatchObject({ version: 2, data: { status: "approved" } });
    // The ledger has the approver as the one who committed (DESIGN §13).
    const history = expectStatus(await server.request("GET", "/v1/records/returns/p-approve/history"), 200);
    expect(history.data[0]).toMatchObject({ version: 2, commitId: approved.result.commitId });
    expect(history.data[0].committedBy.tokenName).toBe("alice");
    const events = await eventsOf(server, "returns/p-approve");
    expect(events.map((e: { type: string; commitId: string }) => [e.type, e.commitId])).toEqual([
      ["return.approved", approved.result.commitId],
    ]);
    // The same approver again: 200 with it. Anyone else, or a reject: 409.
    expect(expectStatus(await as.person("POST", `/v1/proposals/${proposal.id}/approve`), 200)).toEqual(
      approved,
    );
    expectProblem(await as.other("POST", `/v1/proposals/${proposal.id}/approve`), 409);
    expectProblem(await as.other("POST", `/v1/proposals/${proposal.id}/reject`), 409);
    expect(await eventsOf(server, "returns/p-approve")).toHaveLength(1);
  });

  test("four eyes: the proposing token cannot approve, admin included (403)", async () => {
    const proposal = await returnAndProposal("p-self");
    const both = await token("agent-and-approver", ["propose", "approve"]);
    const own = expectStatus(
      await both("POST", "/v1/proposals", {
        summary: "mine",
        commit: { events: [{ type: "a.b", aggregate: "a/1" }] },
      }),
      201,
    );
    expectProblem(await both("POST", `/v1/proposals/${own.id}/approve`), 403);
    const byAdmin = expectStatus(
      await server.request("POST", "/v1/proposals", {
        summary: "admin's",
        commit: { events: [{ type: "a.b", aggregate: "a/1" }] },
      }),
      201,
    );
    expectProblem(await server.request("POST", `/v1/proposals/${byAdmin.id}/approve`), 403);
    expect(expectStatus(await as.person("GET", `/v1/proposals/${own.id}`), 200).status).toBe("pending");
    // Scopes: a propose or read token cannot decide at all.
    expectProblem(await as.agent("POST", `/v1/proposals/${proposal.id}/approve`), 403);
    expectProblem(await as.reader("POST", `/v1/proposals/${proposal.id}/reject`), 403);
  });

  test("a record changed since: 409 with currentVersion, conflicted with the problem, nothing written", async () => {
    const proposal = await returnAndProposal("p-conflict");
    expectStatus(
      await server.request("POST", "/v1/commits", {
        records: [{ collection: "returns", id: "p-conflict", data: { status: "cancelled by customer" } }],
      }),
      201,
    );
    const refused = expectProblem(await as.person("POST", `/v1/proposals/${proposal.id}/approve`), 409);
    expect(refused.currentVersion).toBe(2);
    expect(refused.errors[0].pointer).toBe("/commit/records/0/expectedVersion");
    const after = expectStatus(await as.person("GET", `/v1/proposals/${proposal.id}`), 200);
    expect(after.status).toBe("conflicted");
    expect(after.result).toMatchObject({ status: 409, currentVersion: 2 });
    expect(after.decidedBy.tokenName).toBe("alice");
    const record = expectStatus(await server.request("GET", "/v1/records/returns/p-conflict"), 200);
    expect(record).toMatchObject({ version: 2, data: { status: "cancelled by customer" } });
    expect(await eventsOf(server, "returns/p-conflict")).toEqual([]);
    expectProblem(await as.other("POST", `/v1/proposals/${proposal.id}/approve`), 409);
  });

  test("a schema registered since makes the approval 422, conflicted, nothing written", async () => {
    const proposal = expectStatus(
      await as.agent("POST", "/v1/proposals", {
        summary: "later schema",
        commit: { events: [{ type: "later.typed", aggregate: "later/1", payload: {} }] },
      }),
      201,
    );
    expectStatus(
      await server.request("PUT", "/v1/event-types/later.typed", { schema: { required: ["n"] } }),
      201,
    );
    expectProblem(
      await as.person("POST", `/v1/proposals/${proposal.id}/approve`),
      422,
      "/commit/events/0/payload/n",
    );
    expect(expectStatus(await as.person("GET", `/v1/proposals/${proposal.id}`), 200).status).toBe(
      "conflicted",
    );
    expect(await eventsOf(server, "later/1")).toEqual([]);
  });
});

test("event ids of an approved proposal are the proposer's (DESIGN §3 `id`)", async () => {
  const id = crypto.randomUUID();
  const event = { id, type: "ids.proposed", aggregate: "ids/1", payload: { n: 1 } };
  const proposal = expectStatus(
    await as.agent("POST", "/v1/proposals", { summary: "with an id", commit: { events: [event] } }),
    201,
  );
  expectStatus(await as.person("POST", `/v1/proposals/${proposal.id}/approve`), 200);
  // The approver reusing the id is another token: 409, whatever the content.
  const approver = await token("approver-who-commits", ["commit", "approve"]);
  expectProblem(await approver("POST", "/v1/commits", { events: [event] }), 409, "/events/0/id");
  // The proposer retrying the same event (as a proposal) gets it approved without a second event.
  const again = expectStatus(
    await as.agent("POST", "/v1/proposals", { summary: "retry", commit: { events: [event] } }),
    201,
  );
  const applied = expectStatus(await as.person("POST", `/v1/proposals/${again.id}/approve`), 200);
  expect(applied.result.events[0].id).toBe(id);
  expect(await eventsOf(server, "ids/1")).toHaveLength(1);
});

describe("reject, expire, prune", () => {
  test("reject with a reason; then neither approve nor reject", async () => {
    const proposal = await returnAndProposal("p-reject");
    const rejected = expectStatus(
      await as.person("POST", `/v1/proposals/${proposal.id}/reject`, { reason: "outside the window" }),
      200,
    );
    expect(rejected).toMatchObject({ status: "rejected", reason: "outside the window", result: null });
    expectProblem(await as.other("POST", `/v1/proposals/${proposal.id}/approve`), 409);
    expectProblem(await as.person("POST", `/v1/proposals/${proposal.id}/reject`), 409);
    expectProblem(await as.person("POST", `/v1/proposals/${proposal.id}/reject`, { why: 1 }), 422, "/why");
  });

  test("revoking the proposing token rejects its pending proposals, decided by the revoking token", async () => {
    const created = expectStatus(
      await server.request("POST", "/v1/tokens", { name: "doomed-agent", scopes: ["propose"] }),
      201,
    );
    const doomed = apiClient(server.url, created.token);
    const admin = expectStatus(
      await server.request("POST", "/v1/tokens", { name: "revoker", scopes: ["admin"] }),
      201,
    );
    const propose = (summary: string) =>
      doomed("POST", "/v1/proposals", { summary, commit: { events: [{ type: "a.b", aggregate: "a/1" }] } });
    const approved = expectStatus(await propose("approved first"), 201);
    expectStatus(await as.person("POST", `/v1/proposals/${approved.id}/approve`), 200);
    const pending = expectStatus(await propose("still pending"), 201);
    const others = await returnAndProposal("p-other-agent");

    expectStatus(await apiClient(server.url, admin.token)("DELETE", `/v1/tokens/${created.id}`), 200);
    const rejected = expectStatus(await as.person("GET", `/v1/proposals/${pending.id}`), 200);
    expect(rejected).toMatchObject({
      status: "rejected",
      reason: "proposer-revoked",
      decidedBy: { tokenId: admin.id, tokenName: "revoker" },
    });
    expect(rejected.decidedAt).not.toBeNull();
    expectProblem(await as.person("POST", `/v1/proposals/${pending.id}/approve`), 409);
    expect(expectStatus(await as.person("GET", `/v1/proposals/${approved.id}`), 200).status).toBe("approved");
    expect(expectStatus(await as.person("GET", `/v1/proposals/${others.id}`), 200).status).toBe("pending");
  });

  test("past expiresAt: swept to expired; approving it is 409; unapproved ones are pruned after retention", async () => {
    const soon = await returnAndProposal("p-expire", { expiresIn: "10s" });
    const kept = await returnAndProposal("p-kept");
    expectStatus(await as.person("POST", `/v1/proposals/${kept.id}/approve`), 200);
    now += 11_000;
    await waitFor("the sweep to expire the proposal", async () => {
      const body = expectStatus(await as.person("GET", `/v1/proposals/${soon.id}`), 200);
      return body.status === "expired";
    });
    expectProblem(await as.person("POST", `/v1/proposals/${soon.id}/approve`), 409);
    now += 2 * 3_600_000;
    await waitFor("retention to prune the expired proposal", async () => {
      return (await as.person("GET", `/v1/proposals/${soon.id}`)).status === 404;
    });
    expect(expectStatus(await as.person("GET", `/v1/proposals/${kept.id}`), 200).status).toBe("approved");
  });

  test("an expired proposal is refused even before the sweep sees it", async () => {
    const stopped = await startServer({}, { dispatch: false, clock: () => now });
    try {
      const proposer = apiClient(stopped.url, stopped.token);
      const created = expectStatus(
        await stopped.request("POST", "/v1/tokens", { name: "approver", scopes: ["approve"] }),
        201,
      );
      const approver = apiClient(stopped.url, created.token);
      const proposal = expectStatus(
        await proposer("POST", "/v1/proposals", {
          summary: "short",
          commit: { events: [{ type: "a.b", aggregate: "a/1" }] },
          expiresIn: "1s",
        }),
        201,
      );
      now += 2000;
      expectProblem(await approver("POST", `/v1/proposals/${proposal.id}/approve`), 409);
      expect(expectStatus(await approver("GET", `/v1/proposals/${proposal.id}`), 200).status).toBe("expired");
    } finally {
      await stopped.stop();
    }
  });

  test("metrics: proposals by status and decisions", async () => {
    const text = (await server.request("GET", "/metrics")).body as string;
    expect(text).toMatch(/^outboxd_proposals\{status="approved"\} [1-9]\d*$/m);
    expect(text).toMatch(/^outboxd_proposals\{status="pending"\} \d+$/m);
    expect(text).toMatch(/^outboxd_proposal_decisions_total\{decision="approved"\} [1-9]\d*$/m);
    expect(text).toMatch(/^outboxd_proposal_decisions_total\{decision="conflicted"\} [1-9]\d*$/m);
    expect(text).toMatch(/^outboxd_proposal_decisions_total\{decision="rejected"\} [1-9]\d*$/m);
  });
});
