// `outboxd serve` and `outboxd dispatch` under Bun: long-running processes that stop cleanly on
// SIGTERM and SIGINT (src/server.ts does the work; src/deno.ts is the same under Deno).
import { createOutboxd } from "../app.ts";
import { loadConfig } from "../config.ts";
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

export async function serveCommand(): Promise<void> {
  await serve(loadConfig(), bun);
}

export async function dispatchCommand(): Promise<void> {
  const outboxd = await createOutboxd(loadConfig(), { dispatchOnly: true });
  outboxd.logger.log("info", "dispatching", { pid: process.pid });
  stopOnSignal(bun, outboxd, () => outboxd.stop());
}
