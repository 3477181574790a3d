// Graceful shutdown (DESIGN §6, §2): an `outboxd serve` child that gets SIGTERM while a webhook
// is in flight to a slow receiver lets that send finish, records it as delivered, and exits 0.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { apiClient } from "../helpers/api.ts";
import { type Child, startChild } from "../helpers/process.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/server.ts";
import { Database } from "../helpers/sqlite.ts";
import { expectStatus, gate, ok, waitUntil } from "./harness.ts";

const TOKEN = `shutdown-admin-${crypto.randomUUID()}`;
const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("shutdown", () => {
  test("SIGTERM while a send is in flight to a slow receiver: the send finishes, is recorded delivered, exit 0", async () => {
    const dir = tempDir("outboxd-shutdown-");
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const slow = gate();
    const receiver = startReceiver(async () => {
      await slow.promise;
      return ok();
    });
    cleanup.push(() => receiver.stop());
    cleanup.push(() => slow.open());

    const file = join(dir, "outboxd.db");
    const child: Child = startChild([process.execPath, "src/main.ts", "serve"], {
      PORT: "0",
      OUTBOXD_DATABASE_URL: `file:${file}`,
      OUTBOXD_ADMIN_TOKEN: TOKEN,
      OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "1",
      OUTBOXD_LOG_LEVEL: "info",
    });
    cleanup.push(async () => {
      child.kill("SIGKILL");
      await child.exited;
    });
    const api = apiClient(await child.listening(), TOKEN);
    expectStatus(await api("POST", "/v1/endpoints", { url: receiver.url }), 201);
    const committed = expectStatus(
      await api("POST", "/v1/commits", {
        events: [{ type: "slow.thing", aggregate: "slow/1", payload: {} }],
      }),
      201,
    );
    const deliveryId = committed.events[0].deliveries[0].id as string;

    await waitUntil("the webhook in flight", () => receiver.received.length === 1);
    child.kill("SIGTERM");
    // Only once the process is shutting down does the receiver answer.
    await waitUntil("the child to start shutting down", () =>
      child.stderr().includes('"msg":"shutting down"'),
    );
    expect(child.proc.exitCode).toBeNull();
    slow.open();

    expect(await child.exited).toBe(0);
    expect(receiver.received).toHaveLength(1);
    const db = new Database(file, { timeout: 5000 });
    try {
      const row = db
        .prepare(
          "SELECT status, attempt_count AS attempts, lease_owner AS owner FROM deliveries WHERE id = ?",
        )
        .get(deliveryId) as { status: string; attempts: number; owner: string | null };
      expect(row).toMatchObject({ status: "delivered", attempts: 1, owner: null });
      const attempts = db
        .prepare("SELECT status_code AS code FROM attempts WHERE delivery_id = ?")
        .all(deliveryId);
      expect(attempts).toEqual([{ code: 200 }]);
    } finally {
      db.close();
    }
  }, 30_000);
});
