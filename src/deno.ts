// `outboxd serve` under Deno: src/server.ts, as for Bun (src/cli/serve.ts), with Deno.serve for
// the listeners and Deno's signals. Same environment variables, same JSON log lines
// (`listening` with url and pid), same stop on SIGTERM/SIGINT.
//   deno run -A src/deno.ts          (deno.json sets nodeModulesDir: "manual": run `npm ci` first)
// Both database drivers load under Deno, the `libsql` engine package included (Node-API).
import { CommandError } from "./cli/args.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { serve } from "./server.ts";

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
  await serve(loadConfig(Deno.env.toObject()), {
    name: "deno",
    pid: Deno.pid,
    listen(hostname, port, fetch) {
      const server = Deno.serve({ hostname, port, onListen: () => {} }, fetch);
      return { hostname: server.addr.hostname, port: server.addr.port, stop: () => server.shutdown() };
    },
    onSignal: (signal, handler) => Deno.addSignalListener(signal, handler),
    exit: (code) => Deno.exit(code),
  });
}

try {
  await main();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    Deno.exit(2);
  }
  if (error instanceof CommandError) {
    console.error(error.message);
    Deno.exit(1);
  }
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  Deno.exit(1);
}
