// `outboxd serve` and `outboxd dispatch`: long-running processes that stop cleanly on SIGTERM
// and SIGINT (stop accepting, let in-flight sends finish, close the database).
import { createOutboxd } from "../app.ts";
import { loadConfig } from "../config.ts";
import type { Logger } from "../ops/log.ts";

export async function serveCommand(): Promise<void> {
  const config = loadConfig();
  const outboxd = await createOutboxd(config);
  const server = Bun.serve({ hostname: config.host, port: config.port, fetch: outboxd.http.fetch });
  outboxd.logger.log("info", "listening", {
    url: `http://${server.hostname}:${server.port}`,
    pid: process.pid,
  });
  // The metrics listener serves /metrics only, without a token, for a scraper on a private network.
  const metricsServer =
    config.metricsPort === undefined
      ? null
      : Bun.serve({
          hostname: config.host,
          port: config.metricsPort,
          fetch: (request) =>
            new URL(request.url).pathname === "/metrics"
              ? outboxd.metricsResponse()
              : new Response("not found", { status: 404 }),
        });
  if (metricsServer) {
    outboxd.logger.log("info", "metrics listening", {
      url: `http://${metricsServer.hostname}:${metricsServer.port}/metrics`,
    });
  }
  onShutdown(async () => {
    await server.stop();
    await metricsServer?.stop();
    await outboxd.stop();
  }, outboxd.logger);
}

export async function dispatchCommand(): Promise<void> {
  const outboxd = await createOutboxd(loadConfig());
  outboxd.logger.log("info", "dispatching", { pid: process.pid });
  onShutdown(() => outboxd.stop(), outboxd.logger);
}

function onShutdown(stop: () => Promise<void>, logger: Logger) {
  const shutdown = async (signal: string) => {
    logger.log("info", "shutting down", { signal });
    await stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}
