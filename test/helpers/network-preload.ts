// `bun --preload ./test/helpers/network-preload.ts src/main.ts serve`: an outboxd process whose
// client driver talks through the SIMULATED network of network.ts (tests and benchmarks only):
// OUTBOXD_SIMULATED_RTT_MS per request (to a libSQL server when OUTBOXD_DATABASE_URL points at
// one), and the request counts (plus the statements they
// carried and the time the database spent on them) written every 250 ms to
// OUTBOXD_SIMULATED_NETWORK_STATS when set.
import { writeFileSync } from "node:fs";
import { clientSeam } from "../../src/db/client-driver.ts";
import type { RemoteWriter } from "../../src/db/remote-writer.ts";
import { installNetwork } from "./network.ts";

const network = installNetwork({ delayMs: Number(process.env.OUTBOXD_SIMULATED_RTT_MS ?? 0) });
const statsFile = process.env.OUTBOXD_SIMULATED_NETWORK_STATS;
const writers: RemoteWriter[] = [];
clientSeam.writers = (writer) => writers.push(writer);
if (statsFile) {
  const write = () => {
    const { counts, statements, serverMs, failed } = network;
    const sum = (key: keyof RemoteWriter["stats"]) => writers.reduce((n, w) => n + w.stats[key], 0);
    const writer = {
      readingGroups: sum("readingGroups"),
      readingGroupRequests: sum("readingGroupRequests"),
      locked: sum("locked"),
      guardFailures: sum("guardFailures"),
      gatherMs: sum("gatherMs"),
      gatheredFull: sum("gatheredFull"),
      lockedReadsMs: sum("lockedReadsMs"),
      buildMs: sum("buildMs"),
      commitMs: sum("commitMs"),
    };
    writeFileSync(statsFile, JSON.stringify({ counts, statements, serverMs, failed, writer }));
  };
  setInterval(write, 250).unref();
}
