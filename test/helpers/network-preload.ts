// `bun --preload ./test/helpers/network-preload.ts src/main.ts serve`: an outboxd process whose
// client driver talks through the SIMULATED network of network.ts (tests and benchmarks only):
// OUTBOXD_SIMULATED_RTT_MS per request, and the request counts written every 250 ms to
// OUTBOXD_SIMULATED_NETWORK_STATS when set.
import { writeFileSync } from "node:fs";
import { installNetwork } from "./network.ts";

const network = installNetwork({ delayMs: Number(process.env.OUTBOXD_SIMULATED_RTT_MS ?? 0) });
const statsFile = process.env.OUTBOXD_SIMULATED_NETWORK_STATS;
if (statsFile) {
  setInterval(() => writeFileSync(statsFile, JSON.stringify(network.counts)), 250).unref();
}
