// What `outboxd serve` does, once for every runtime: the composition root (app.ts), the API
// listener, the optional metrics listener, and a clean stop on SIGTERM/SIGINT (stop accepting,
// let in-flight sends finish, close the database). Bun (src/cli/serve.ts) and Deno
// (src/deno.ts) differ only in the Runtime they pass.
import { createOutboxd, type Outboxd } from "./app.ts";
import { CommandError } from "./cli/args.ts";
import type { Config } from "./config.ts";
import type { Opening } from "./opening.ts";

export interface Listener {
  hostname: string;
  port: number;
  stop(): Promise<void>;
}

export interface Runtime {
  /** Logged with `listening` when not Bun (e.g. "deno"). */
  name?: string;
  pid: number;
  listen(hostname: string, port: number, fetch: (request: Request) => Response | Promise<Response>): Listener;
  onSignal(signal: "SIGTERM" | "SIGINT", handler: () => void): void;
  exit(code: number): void;
}

/**
 * Starts the API (and the metrics listener when configured); stops on SIGTERM or SIGINT. `opening`:
 * the database already being opened (src/opening.ts), else createOutboxd opens it.
 */
export async function serve(config: Config, runtime: Runtime, opening?: Opening): Promise<Outboxd> {
  const outboxd = await createOutboxd(config, opening ? { opening } : {});
  const listen = (
    port: number,
    setting: string,
    fetch: (request: Request) => Response | Promise<Response>,
  ) => {
    try {
      return runtime.listen(config.host, port, fetch);
    } catch (error) {
      if (!addressInUse(error)) throw error;
      throw new CommandError(
        `port ${port} on ${config.host} is in use: stop what listens there, or choose another port with ${setting}=…`,
      );
    }
  };
  let server: Listener;
  try {
    server = listen(config.port, "PORT", outboxd.http.fetch);
  } catch (error) {
    await outboxd.stop();
    throw error;
  }
  outboxd.logger.log("info", "listening", {
    url: `http://${server.hostname}:${server.port}`,
    pid: runtime.pid,
    ...(runtime.name ? { runtime: runtime.name } : {}),
  });
  // The metrics listener serves /metrics only, without a token, for a scraper on a private network.
  let metricsServer: Listener | null = null;
  try {
    metricsServer =
      config.metricsPort === undefined
        ? null
        : listen(config.metricsPort, "OUTBOXD_METRICS_PORT", (request) =>
            new URL(request.url).pathname === "/metrics"
              ? outboxd.metricsResponse()
              : new Response("not found", { status: 404 }),
          );
  } catch (error) {
    await server.stop();
    await outboxd.stop();
    throw error;
  }
  if (metricsServer) {
    outboxd.logger.log("info", "metrics listening", {
      url: `http://${metricsServer.hostname}:${metricsServer.port}/metrics`,
    });
  }
  stopOnSignal(runtime, outboxd, async () => {
    await server.stop();
    await metricsServer?.stop();
    await outboxd.stop();
  });
  return outboxd;
}

/** Bun's EADDRINUSE, Deno's AddrInUse. */
function addressInUse(error: unknown): boolean {
  return (
    error instanceof Error &&
    ((error as { code?: unknown }).code === "EADDRINUSE" || error.name === "AddrInUse")
  );
}

/** On the first SIGTERM or SIGINT: logs it, runs `stop`, exits 0. */
export function stopOnSignal(runtime: Runtime, outboxd: Outboxd, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    outboxd.logger.log("info", "shutting down", { signal });
    await stop();
    runtime.exit(0);
  };
  runtime.onSignal("SIGTERM", () => void shutdown("SIGTERM"));
  runtime.onSignal("SIGINT", () => void shutdown("SIGINT"));
}
