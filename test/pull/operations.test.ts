// Pull endpoints where operators look (DESIGN §12): stats carry the endpoint's kind and its
// leased deliveries as in flight, /metrics has outboxd_pull_leased, `outboxd stats` a kind
// column, and the dashboard's endpoints table says "pull · n leased" instead of a url.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitEvents, expectStatus } from "../dispatch/harness.ts";
import { launchBrowser, type TestBrowser } from "../helpers/browser.ts";
import { createPullEndpoint, type Pulled, type PullRig, startPullRig } from "./helpers.ts";

describe("pull endpoints in stats, metrics and the dashboard", () => {
  let rig: PullRig;
  let browser: TestBrowser | undefined;
  beforeAll(async () => {
    rig = await startPullRig();
    await commitEvents(rig.server, [
      { aggregate: "ops/1", endpoints: [rig.endpointId] },
      { aggregate: "ops/2", endpoints: [rig.endpointId] },
    ]);
    expect((await rig.poll({ max: 1 })).data).toHaveLength(1);
  });
  afterAll(async () => {
    await browser?.browser.close();
    await rig.stop();
  });

  test("stats: kind pull, one leased (in flight) of two pending", async () => {
    const stats = expectStatus(await rig.server.request("GET", "/v1/stats"), 200);
    expect(stats.endpoints.find((e: { id: string }) => e.id === rig.endpointId)).toMatchObject({
      kind: "pull",
      pending: 2,
      inFlight: 1,
      due: 1,
    });
  });

  test("metrics: outboxd_pull_leased per pull endpoint", async () => {
    const metrics = await rig.server.request("GET", "/metrics");
    expect(metrics.body).toContain(`outboxd_pull_leased{endpoint="${rig.endpointId}"} 1`);
  });

  test("metrics: an ack and a nack are delivery attempts like a webhook's, the ack with its latency", async () => {
    const endpointId = await createPullEndpoint(rig.server);
    await commitEvents(rig.server, [
      { aggregate: "ops/a", endpoints: [endpointId] },
      { aggregate: "ops/b", endpoints: [endpointId] },
    ]);
    const [first, second] = (await rig.poll({ max: 2 }, endpointId)).data as [Pulled, Pulled];
    expect(
      await rig.ack(
        {
          acks: [{ deliveryId: first.deliveryId, leaseToken: first.leaseToken }],
          nacks: [{ deliveryId: second.deliveryId, leaseToken: second.leaseToken, retryAfter: "1h" }],
        },
        endpointId,
      ),
    ).toEqual({ acked: 1, nacked: 1, stale: [] });
    const metrics = (await rig.server.request("GET", "/metrics")).body as string;
    expect(metrics).toContain(
      `outboxd_delivery_attempts_total{endpoint="${endpointId}",result="delivered"} 1`,
    );
    expect(metrics).toContain(`outboxd_delivery_attempts_total{endpoint="${endpointId}",result="retry"} 1`);
    expect(metrics).toContain(`outboxd_delivery_latency_seconds_count{endpoint="${endpointId}"} 1`);
  });

  test("dashboard: the endpoint's row says pull and how many are leased", async () => {
    browser = await launchBrowser();
    const { page } = browser;
    await page.goto(`${rig.server.url}/`);
    await page.fill("#token", rig.server.token);
    await page.click("#connect");
    await page.waitForSelector(`#endpoints tbody tr:has(code:text-is("${rig.endpointId}"))`);
    const row = (await page.textContent(`#endpoints tbody tr:has(code:text-is("${rig.endpointId}"))`)) ?? "";
    expect(row).toContain("pull · 1 leased");
    expect(browser.pageErrors).toEqual([]);
  });
});
