// `outboxd serve` and `outboxd dispatch` under Bun: long-running processes that stop cleanly on
// SIGTERM and SIGINT (src/server.ts does the work; src/deno.ts is the same under Deno).
import { createOutboxd } from "../app.ts";
import type { Config } from "../config.ts";
import type { Opening } from "../opening.ts";
import { type Runtime, serve, stopOnSignal } from "../server.ts";

const bun: Runtime = {
  pid: process.pid,
  listen(hostname, port, fetch) {
    const server = Bun.serve({ hostname, port, fetch });
    return { hostname: server.hostname ?? hostname, port: server.port ?? port, stop: () => server.stop() };
  },
  onSignal: (signal, handler) => process.once(signal, handler),
  exit: (code) => process.exit(code),
};

// src/main.ts reads the configuration and begins opening the database before it loads this module.
export async function serveCommand(config: Config, opening: Opening): Promise<void> {
  await serve(config, bun, opening);
}

export async function dispatchCommand(config: Config, opening: Opening): Promise<void> {
  const outboxd = await createOutboxd(config, { opening });
  outboxd.logger.log("info", "dispatching", { pid: process.pid });
  stopOnSignal(bun, outboxd, () => outboxd.stop());
}
