// An approval re-checks expiresAt inside its own transaction (DESIGN §10): one that passed the
// service's pending check just before expiresAt, and reaches the writer after it, is refused
// and writes nothing. The interleaving is driven step by step: the proposal is pending when the
// approving write runs, at a time past its expiresAt.
import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { CommitInput } from "../../src/commit/commit-op.ts";
import { get } from "../../src/db/op.ts";
import type { Database } from "../../src/db/open.ts";
import { Problem } from "../../src/lib/problem.ts";
import { getProposal, insertProposal } from "../../src/proposals/store.ts";
import { commitApprovingWrite } from "../../src/proposals/writes.ts";
import { openMigratedDatabase } from "../helpers/database.ts";
import { tempDir } from "../helpers/server.ts";

let db: Database | undefined;
let dir = "";
afterEach(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

const EXPIRES_AT = 1_010_000;

async function pendingProposal(database: Database, id: string): Promise<void> {
  await database.writer.write(
    insertProposal({
      id,
      status: "pending",
      summary: "expires at 1,010,000",
      commit: "{}",
      proposedByTokenId: "tok_agent",
      proposedByTokenName: "agent",
      idempotencyKey: null,
      requestHash: null,
      createdAt: 1_000_000,
      expiresAt: EXPIRES_AT,
      decidedAt: null,
      decidedByTokenId: null,
      decidedByTokenName: null,
      reason: null,
      result: null,
      commitId: null,
    }),
  );
}

function approving(proposalId: string, at: number) {
  const input: CommitInput = {
    by: { tokenId: "tok_person", tokenName: "person", proposalId },
    eventIdOwner: "tok_agent",
    records: [],
    events: [
      {
        id: undefined,
        type: "order.approved",
        aggregate: `orders/${proposalId}`,
        payload: "{}",
        deliverAfter: null,
        deliverBy: at + 86_400_000,
        endpoints: undefined,
      },
    ],
    idempotency: undefined,
    traceparent: undefined,
    conflictStatus: 409,
    maxDeliveries: 1000,
    now: at,
  };
  return commitApprovingWrite(input, {
    proposalId,
    by: { tokenId: "tok_person", tokenName: "person" },
    reason: null,
    at,
  });
}

test("an approval reaching its transaction after expiresAt is refused and commits nothing", async () => {
  dir = tempDir();
  db = await openMigratedDatabase(dir);
  await pendingProposal(db, "prop_late");
  const late = await db.write(approving("prop_late", EXPIRES_AT)).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(late).toBeInstanceOf(Problem);
  expect((late as Problem).slug).toBe("proposal-not-pending");
  expect((late as Problem).detail).toContain("expired");
  expect((await db.driver.read(getProposal("prop_late")))?.status).toBe("pending");
  const events = await db.driver.read(get<{ n: number }>("SELECT count(*) AS n FROM events"));
  expect(events?.n).toBe(0);
  const commits = await db.driver.read(get<{ n: number }>("SELECT count(*) AS n FROM commits"));
  expect(commits?.n).toBe(0);
});

test("an approval in its transaction before expiresAt is applied", async () => {
  dir = tempDir();
  db = await openMigratedDatabase(dir);
  await pendingProposal(db, "prop_in_time");
  const outcome = await db.write(approving("prop_in_time", EXPIRES_AT - 1));
  expect(outcome.replayed).toBe(false);
  const row = await db.driver.read(getProposal("prop_in_time"));
  expect(row?.status).toBe("approved");
  expect(row?.commitId).toBe(outcome.result.commitId);
});
