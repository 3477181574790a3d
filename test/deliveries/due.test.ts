// `due` in /v1/stats (and outboxd_due_deliveries) counts exactly what a claim
// could take now: not the rows behind a queue's head, not a queue whose head is in flight, not
// a disabled endpoint's rows, not rows past their deadline, not rows of a missing endpoint.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { claimDeliveries } from "../../src/deliveries/claim.ts";
import { stats } from "../../src/ops/stats.ts";
import { commitEvents, exec, expectStatus, onlyDelivery } from "../dispatch/harness.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  // Raw operations through this thread's Writer (the SQL under test): the writer on this thread.
  server = await startServer({}, { dispatch: false, writer: "here" });
});
afterAll(async () => {
  await server.stop();
});

const endpoint = async (name: string) =>
  expectStatus(await server.request("POST", "/v1/endpoints", { url: `http://127.0.0.1:9/${name}` }), 201)
    .id as string;

test("due is exactly what a claim takes now, per endpoint and in total", async () => {
  const [open, disabled, removed] = [
    await endpoint("open"),
    await endpoint("disabled"),
    await endpoint("removed"),
  ];
  const to = (id: string, aggregate: string, n = 1) =>
    commitEvents(
      server,
      Array.from({ length: n }, () => ({ aggregate, endpoints: [id] })),
    );
  // A queue whose head is in flight (claimed), with a due row behind it.
  const inFlight = await to(open, "in-flight", 2);
  const first = await server.outboxd.db.writer.write(
    claimDeliveries({
      owner: "t",
      now: Date.now(),
      leaseMs: 60_000,
      limit: 10,
      endpointRoom: {},
      endpointLimit: 10,
    }),
  );
  expect(first.map((d) => d.id)).toEqual([onlyDelivery(inFlight[0])]);
  // Due: the head of a queue of two (the second waits behind it).
  const ready = await to(open, "ready", 2);
  // Not due: a disabled endpoint's, one past its deadline, one whose endpoint row is gone.
  await to(disabled, "disabled");
  expectStatus(await server.request("PATCH", `/v1/endpoints/${disabled}`, { disabled: true }), 200);
  const late = await to(open, "late");
  await exec(server, "UPDATE deliveries SET deliver_by = :past WHERE id = :id", {
    id: onlyDelivery(late[0]),
    past: Date.now() - 1,
  });
  await to(removed, "orphan");
  await exec(server, "DELETE FROM endpoints WHERE id = :id", { id: removed });

  const now = Date.now();
  const current = await server.outboxd.db.driver.read(stats(now));
  expect(current.pending).toBe(7);
  expect(current.due).toBe(1);
  expect(current.endpoints.find((e) => e.id === open)?.due).toBe(1);
  expect(current.endpoints.find((e) => e.id === disabled)?.due).toBe(0);
  const claimed = await server.outboxd.db.writer.write(
    claimDeliveries({ owner: "u", now, leaseMs: 60_000, limit: 100, endpointRoom: {}, endpointLimit: 100 }),
  );
  expect(claimed.map((d) => d.id)).toEqual([onlyDelivery(ready[0])]);
  expect(claimed.length).toBe(current.due);

  const metrics = await (await server.outboxd.metricsResponse()).text();
  expect(metrics).toMatch(/^outboxd_due_deliveries 0$/m);
});
