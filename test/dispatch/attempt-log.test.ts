// Attempt logs (DESIGN §6 logs): a failed attempt is one warn line, a successful one
// is logged at debug only, and one info line per endpoint sums the minute up (delivered,
// failed, p50/p99). Stopping the dispatcher writes the summary of the minute so far.
import { expect, test } from "bun:test";
import { createLogger } from "../../src/ops/log.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startServer } from "../helpers/server.ts";
import { commitEvents, expectStatus, onlyDelivery, waitForRow } from "./harness.ts";

test("failures warn one line each; successes only in the per-endpoint summary at info", async () => {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const receiver = startReceiver((_, index) => new Response(null, { status: index === 0 ? 500 : 200 }));
  const server = await startServer(
    { OUTBOXD_RETRY_BASE: "20ms", OUTBOXD_RETRY_CAP: "50ms" },
    { logger: createLogger("info", (line) => lines.push(JSON.parse(line))) },
  );
  try {
    const endpoint = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
    // One at a time, so the receiver's first answer (500) goes to the first event.
    for (let i = 0; i < 3; i++) {
      const [event] = await commitEvents(server, [{ aggregate: `log/${i}`, endpoints: [endpoint.id] }]);
      await waitForRow(server, onlyDelivery(event), "delivered", (r) => r.status === "delivered");
    }
    await server.outboxd.dispatcher?.stop();
    const attempts = lines.filter((l) => l.msg === "delivery attempt");
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ level: "warn", statusCode: 500, outcome: "retry" });
    const summaries = lines.filter((l) => l.msg === "delivery summary");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ level: "info", endpointId: endpoint.id, delivered: 3, failed: 1 });
    expect(typeof summaries[0]?.latencyP99Ms).toBe("number");
    expect(typeof summaries[0]?.durationP50Ms).toBe("number");
  } finally {
    await server.stop();
    await receiver.stop();
  }
});
