// Issue 15's ratio, A/B: one `serve` against two sharing the database (bench/scenarios/remote.ts:
// simulated 2 ms round trip, 64 connections), alternated in the same minutes, from this checkout
// and from others (each runs its own code, simulated server and scenario). Per pair: both rates
// and their ratio, and beside them what sets them on a shared machine: commits per group, CPU per
// commit (serves + simulated server), the server's write lock (turns/s, ms per turn, % held) and
// the machine's idle share.
//   bun bench/probe/remote-ratio.ts [--rounds=3] [--seconds=5] [--warm=<s per serve process>] [<other checkout> …]
// Without --warm each checkout's scenario warms up as it does in `npm run bench`.
import { join, resolve } from "node:path";
import { median, REPO } from "../lib.ts";

const flag = (name: string): number | undefined => {
  const value = process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  return value === undefined ? undefined : Number(value);
};
const roots = [REPO, ...process.argv.slice(2).filter((a) => !a.startsWith("--"))].map((r) => resolve(r));
const rounds = flag("rounds") ?? 3;
const seconds = flag("seconds") ?? 5;
const warm = flag("warm");

interface Row {
  commitsPerSecond: number;
  commitsPerGroup: number;
  serveCpuUsPerCommit: number;
  serveMainThreadUsPerCommit: number;
  serverCpuUsPerCommit: number;
  machineIdlePercent: number;
  lockTurnsPerSecond?: number;
  lockMsPerTurn?: number;
  lockBusyPercent?: number;
  lockWorkMsPerTurn?: number;
}
const describe = (r: Row) =>
  `${r.commitsPerSecond}/s groups ${r.commitsPerGroup} cpu ${r.serveCpuUsPerCommit}+${r.serverCpuUsPerCommit} ` +
  `(main ${r.serveMainThreadUsPerCommit})` +
  (r.lockBusyPercent === undefined
    ? ""
    : ` lock ${r.lockTurnsPerSecond}/s×${r.lockMsPerTurn}ms(${r.lockWorkMsPerTurn} work)=${r.lockBusyPercent}%`) +
  ` idle ${r.machineIdlePercent}%`;

const ratios = new Map<string, number[]>(roots.map((root) => [root, []]));
for (let round = 0; round < rounds; round++) {
  for (const root of round % 2 === 0 ? roots : [...roots].reverse()) {
    const { remoteCommitScenario } = await import(join(root, "bench/scenarios/remote.ts"));
    const run = (serves: number): Promise<Row> =>
      remoteCommitScenario({
        seconds,
        roundTripMs: 2,
        serves,
        connections: 64,
        ...(warm === undefined ? {} : { warmUpSeconds: warm * serves }),
      });
    // One then two, or two then one: alternated as the roots are.
    const order = round % 2 === 0 ? [1, 2] : [2, 1];
    const got = new Map<number, Row>();
    for (const serves of order) got.set(serves, await run(serves));
    const one = got.get(1) as Row;
    const two = got.get(2) as Row;
    const ratio = Math.round((two.commitsPerSecond / Math.max(1, one.commitsPerSecond)) * 100) / 100;
    ratios.get(root)?.push(ratio);
    console.log(`round ${round + 1} ${root}: ratio ${ratio}; one ${describe(one)}; two ${describe(two)}`);
  }
}
for (const [root, values] of ratios)
  console.log(`${root}: ratios ${values.join(" / ")} (median ${median(values)})`);
