// CPU per remote commit, A/B: the remote commit scenario (bench/scenarios/remote.ts: serves
// talking Hrana over HTTP to a libSQL server, sqld, 2 ms round trip, 64 connections) run
// from this checkout and from others, alternated, so that every side sees the same minutes of a
// shared machine. Each checkout runs its own code, server and scenario; the figures to compare
// are CPU per commit (serve, its main thread, the server), not commits/s.
//   npx bun bench/probe/remote-cpu.ts [--rounds=3] [--serves=1] [--seconds=3] [--warm=15] [--rtt=2] [<other checkout> …]
// --warm is per side, in seconds (every checkout's scenario knows that form): 15 s by default, so
// that each serve process is past its JIT warm-up (~15,000 commits: bench/scenarios/remote.ts
// WARM_UP_COMMITS) on both sides; with 3 s, two serves' figures held their compiles.
// A checkout for the "before" side: `git worktree add /tmp/before <commit>` (node_modules
// symlinked from this one's).
import { join, resolve } from "node:path";
import { median, REPO } from "../lib.ts";

const flag = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const roots = [REPO, ...process.argv.slice(2).filter((a) => !a.startsWith("--"))].map((r) => resolve(r));
const rounds = flag("rounds", 3);

interface Row {
  commitsPerSecond: number;
  roundTripsPerGroup: number;
  commitsPerGroup: number;
  serveCpuUsPerCommit: number;
  serveMainThreadUsPerCommit: number;
  serverCpuUsPerCommit: number;
  machineIdlePercent: number;
}
const rows = new Map<string, Row[]>(roots.map((root) => [root, []]));
for (let round = 0; round < rounds; round++) {
  // Alternated, and in the other order each round.
  for (const root of round % 2 === 0 ? roots : [...roots].reverse()) {
    const { remoteCommitScenario } = await import(join(root, "bench/scenarios/remote.ts"));
    const row: Row = await remoteCommitScenario({
      seconds: flag("seconds", 3),
      warmUpSeconds: flag("warm", 15),
      roundTripMs: flag("rtt", 2),
      serves: flag("serves", 1),
      connections: 64,
    });
    rows.get(root)?.push(row);
  }
}
for (const [root, measured] of rows) {
  const of = (key: keyof Row) => measured.map((r) => r[key]);
  console.log(
    `${root}: serve ${of("serveCpuUsPerCommit").join("/")} µs/commit (median ${median(of("serveCpuUsPerCommit"))}), ` +
      `main ${of("serveMainThreadUsPerCommit").join("/")}, server ${of("serverCpuUsPerCommit").join("/")} ` +
      `(median ${median(of("serverCpuUsPerCommit"))}); ${of("commitsPerSecond").join("/")} commits/s, ` +
      `groups of ${of("commitsPerGroup").join("/")}, ${of("roundTripsPerGroup").join("/")} requests/group, ` +
      `idle ${of("machineIdlePercent").join("/")}%`,
  );
}
