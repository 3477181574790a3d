// `outboxd serve` under Deno: the same composition root and the same Hono fetch handler as
// src/cli/serve.ts, served by Deno.serve instead of Bun.serve. Same environment variables, same
// JSON log lines (`listening` with url and pid), same stop on SIGTERM/SIGINT.
//   deno run -A src/deno.ts          (deno.json sets nodeModulesDir: "manual": run `npm ci` first)
// Both database drivers load under Deno, the `libsql` engine package included (Node-API).
import { createOutboxd } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";

// The slice of the Deno namespace used here; tsc checks this repository against bun-types only.
interface DenoServer {
  addr: { hostname: string; port: number };
  shutdown(): Promise<void>;
  finished: Promise<void>;
}
declare const Deno: {
  serve(
    options: {
      hostname: string;
      port: number;
      onListen?: (addr: { hostname: string; port: number }) => void;
    },
    handler: (request: Request) => Response | Promise<Response>,
  ): DenoServer;
  addSignalListener(signal: "SIGTERM" | "SIGINT", handler: () => void): void;
  exit(code: number): never;
  pid: number;
  env: { toObject(): Record<string, string> };
};

async function main(): Promise<void> {
  const config = loadConfig(Deno.env.toObject());
  const outboxd = await createOutboxd(config);
  const { logger } = outboxd;
  const server = Deno.serve({ hostname: config.host, port: config.port, onListen: () => {} }, (request) =>
    outboxd.http.fetch(request),
  );
  logger.log("info", "listening", {
    url: `http://${server.addr.hostname}:${server.addr.port}`,
    pid: Deno.pid,
    runtime: "deno",
  });
  // The metrics listener serves /metrics only, without a token, for a scraper on a private network.
  const metricsServer =
    config.metricsPort === undefined
      ? null
      : Deno.serve({ hostname: config.host, port: config.metricsPort, onListen: () => {} }, (request) =>
          new URL(request.url).pathname === "/metrics"
            ? outboxd.metricsResponse()
            : new Response("not found", { status: 404 }),
        );
  if (metricsServer) {
    logger.log("info", "metrics listening", {
      url: `http://${metricsServer.addr.hostname}:${metricsServer.addr.port}/metrics`,
    });
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log("info", "shutting down", { signal });
    await server.shutdown();
    await metricsServer?.shutdown();
    await outboxd.stop();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", () => void shutdown("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => void shutdown("SIGINT"));
}

try {
  await main();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    Deno.exit(2);
  }
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  Deno.exit(1);
}
