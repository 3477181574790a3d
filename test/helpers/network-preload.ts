// `bun --preload ./test/helpers/network-preload.ts src/main.ts serve`: an outboxd process whose
// client driver talks through the SIMULATED network of network.ts (tests and benchmarks only):
// OUTBOXD_SIMULATED_RTT_MS per request (to the simulated server at OUTBOXD_SIMULATED_SERVER, a
// Unix socket, when set), and the request counts (plus the statements they
// carried and the time the database spent on them) written every 250 ms to
// OUTBOXD_SIMULATED_NETWORK_STATS when set.
import { writeFileSync } from "node:fs";
import { installNetwork } from "./network.ts";

const network = installNetwork({
  delayMs: Number(process.env.OUTBOXD_SIMULATED_RTT_MS ?? 0),
  // The simulated server's socket (sim-server.ts), when one runs the database for every process.
  server: process.env.OUTBOXD_SIMULATED_SERVER || undefined,
});
const statsFile = process.env.OUTBOXD_SIMULATED_NETWORK_STATS;
if (statsFile) {
  const write = () => {
    const { counts, statements, serverMs, failed } = network;
    writeFileSync(statsFile, JSON.stringify({ counts, statements, serverMs, failed }));
  };
  setInterval(write, 250).unref();
}
