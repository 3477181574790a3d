// Scenario: the ledger's CPU cost per commit, measured so that a shared, busy machine weighs on
// both sides alike. One process commits through the app's own fetch handler (no sockets, no load
// generator sharing the cores), `connections` requests in flight, and switches the ledger's
// statements off and on (the bench-only switch of src/ledger/append.ts) between blocks of
// commits: A, B, A, B... each block's CPU time (user + system, every thread of the process) per
// commit is one sample; the medians are compared.
// Two shapes: commits that create a record (the commit benchmark's body) and commits that change
// one of 1,000 existing records (each then also moves the version it replaces into the history).
//   bun bench/scenarios/ledger-cpu.ts [--quick] [--blocks N] [--commits N]
import { ledgerBenchSwitch } from "../../src/ledger/append.ts";
import { inProcessOutboxd, median } from "../lib.ts";
import { COMMIT_BODY } from "./commit.ts";

export interface LedgerCpuRow {
  /** "create": each commit creates a record (the commit benchmark's body); "update": each changes one of 1,000. */
  shape: "create" | "update";
  /** Commits per block. */
  commits: number;
  connections: number;
  /** CPU microseconds per commit of each block (every thread), with the ledger and without its statements. */
  withLedgerUs: number[];
  withoutLedgerUs: number[];
  /** Commits/s the CPU allows with the ledger, relative to without: withoutLedger / withLedger (medians). */
  ratio: number;
  /** The same for the main thread alone (JavaScript and SQLite; no garbage collector or JIT threads). */
  mainThreadWithUs: number[];
  mainThreadWithoutUs: number[];
  mainThreadRatio: number;
}

const TOKEN = "bench-ledger-cpu-token";

export async function ledgerCpuScenario(options: {
  shape: "create" | "update";
  blocks: number;
  commits: number;
  connections: number;
}): Promise<LedgerCpuRow> {
  const { outboxd, stop } = await inProcessOutboxd({ token: TOKEN });
  let next = 0;
  const commit = async () => {
    const n = next++;
    const body = COMMIT_BODY.replaceAll("[<id>]", String(options.shape === "update" ? n % 1000 : n));
    const response = await outboxd.http.fetch(
      new Request("http://outboxd/v1/commits", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body,
      }),
    );
    if (response.status !== 201)
      throw new Error(`commit answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  const block = async (count: number) => {
    const each = Math.ceil(count / options.connections);
    const before = process.cpuUsage();
    const beforeThread = process.threadCpuUsage();
    await Promise.all(
      Array.from({ length: options.connections }, async () => {
        for (let i = 0; i < each; i++) await commit();
      }),
    );
    const used = process.cpuUsage(before);
    const thread = process.threadCpuUsage(beforeThread);
    const n = each * options.connections;
    return { all: (used.user + used.system) / n, main: (thread.user + thread.system) / n };
  };
  const withLedgerUs: number[] = [];
  const withoutLedgerUs: number[] = [];
  const mainThreadWithUs: number[] = [];
  const mainThreadWithoutUs: number[] = [];
  try {
    // Warm-up of both: JIT, prepared statements, page cache.
    for (const off of [true, false]) {
      ledgerBenchSwitch.off = off;
      await block(1000);
    }
    for (let i = 0; i < options.blocks; i++) {
      // Alternate which goes first, so a drift in the machine's load favours neither.
      for (const off of i % 2 === 0 ? [false, true] : [true, false]) {
        ledgerBenchSwitch.off = off;
        const us = await block(options.commits);
        (off ? withoutLedgerUs : withLedgerUs).push(Number(us.all.toFixed(1)));
        (off ? mainThreadWithoutUs : mainThreadWithUs).push(Number(us.main.toFixed(1)));
      }
    }
  } finally {
    ledgerBenchSwitch.off = false;
    await stop();
  }
  const row: LedgerCpuRow = {
    shape: options.shape,
    commits: options.commits,
    connections: options.connections,
    withLedgerUs,
    withoutLedgerUs,
    ratio: Number((median(withoutLedgerUs) / median(withLedgerUs)).toFixed(3)),
    mainThreadWithUs,
    mainThreadWithoutUs,
    mainThreadRatio: Number((median(mainThreadWithoutUs) / median(mainThreadWithUs)).toFixed(3)),
  };
  console.error(
    `ledger CPU per ${options.shape} commit (blocks of ${options.commits}): with ${median(withLedgerUs)} µs, without ` +
      `${median(withoutLedgerUs)} µs (medians of ${options.blocks}); commits/s the CPU allows, with / without: ${row.ratio}; ` +
      `main thread alone: ${median(mainThreadWithUs)} vs ${median(mainThreadWithoutUs)} µs, ${row.mainThreadRatio}`,
  );
  return row;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => {
    const at = args.indexOf(name);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  const quick = args.includes("--quick");
  const rows: LedgerCpuRow[] = [];
  for (const shape of ["create", "update"] as const) {
    rows.push(
      await ledgerCpuScenario({
        shape,
        blocks: option("--blocks", quick ? 6 : 20),
        commits: option("--commits", quick ? 1000 : 2000),
        connections: 64,
      }),
    );
  }
  console.log(JSON.stringify(rows, null, 2));
}
