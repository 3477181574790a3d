// A throwaway PostgreSQL server for the bench peers: Debian's packaged binaries, a fresh cluster
// in a temp directory owned by the `postgres` OS user, listening on 127.0.0.1 only, on a free
// port. The runner calls `startPostgres()` and must call `stop()` when done; `stop()` shuts the
// server down and deletes the directory.
//
// Durability is left ON (fsync=on, synchronous_commit=on, full_page_writes default on): outboxd's
// default answers a commit only once SQLite has fsynced it (WAL, synchronous=FULL), so a peer
// that acknowledged commits from memory would be measuring a weaker promise. Every COMMIT here
// waits for its WAL flush, like outboxd's.
//
// By hand: `npx bun bench/peers/postgres.ts` starts one, prints `{"url": …}` and stops it on
// Ctrl-C / SIGTERM (or after MAX_SECONDS, 3600 by default).
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Postgres {
  /** `postgres://postgres@127.0.0.1:PORT/bench` (trust authentication, no password). */
  url: string;
  port: number;
  /** The temp directory holding the cluster (`data/`), the socket and `server.log`. */
  dir: string;
  stop(): Promise<void>;
}

const DATABASE = "bench";

function run(cmd: string, args: string[], what: string): string {
  const result = spawnSync(cmd, args, { encoding: "utf8", timeout: 300_000 });
  if (result.status !== 0) {
    throw new Error(`${what} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/** As the `postgres` OS user: initdb and the server refuse to run as root. */
function asPostgres(args: string[], what: string): string {
  return run("runuser", ["-u", "postgres", "--", ...args], what);
}

/** The newest `/usr/lib/postgresql/N/bin` that has initdb and pg_ctl, or null. */
function findBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => b - a);
  for (const version of versions) {
    const bin = join(root, String(version), "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) return bin;
  }
  return null;
}

/** Finds Debian's PostgreSQL, installing the `postgresql` package if it is missing. */
export function postgresBin(): string {
  const found = findBin();
  if (found) return found;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = () => spawnSync("apt-get", ["install", "-y", "postgresql"], { env, encoding: "utf8" });
  let result = install();
  if (result.status !== 0) {
    // A fresh machine's package lists may be empty or stale: refresh once, then retry.
    spawnSync("apt-get", ["update"], { env, encoding: "utf8", stdio: "ignore" });
    result = install();
  }
  const bin = findBin();
  if (!bin) throw new Error(`apt-get install -y postgresql did not bring initdb/pg_ctl: ${result.stderr}`);
  return bin;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<Postgres> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), "outboxd-bench-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const { uid, gid } = postgresIds();
  chownSync(dir, uid, gid);
  let started = false;
  const pgCtl = join(bin, "pg_ctl");
  const stopNow = (mode: "fast" | "immediate") => {
    if (started) spawnSync("runuser", ["-u", "postgres", "--", pgCtl, "stop", "-D", data, "-m", mode, "-w"]);
    started = false;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // --no-sync only skips initdb's own flush of the template files; the server runs with fsync=on.
    asPostgres(
      [
        join(bin, "initdb"),
        "-D",
        data,
        "--auth=trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
      ],
      "initdb",
    );
    // Another process may take the port between the probe and the bind: retry a few times.
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const options = [
        "-c listen_addresses=127.0.0.1",
        `-p ${port}`,
        `-c unix_socket_directories=${dir}`,
        "-c fsync=on",
        "-c synchronous_commit=on",
        "-c max_connections=200",
      ].join(" ");
      const result = spawnSync(
        "runuser",
        ["-u", "postgres", "--", pgCtl, "start", "-w", "-t", "60", "-D", data, "-l", log, "-o", options],
        { encoding: "utf8", timeout: 90_000 },
      );
      if (result.status === 0) break;
      if (attempt >= 3) throw new Error(`pg_ctl start failed: ${result.stderr}${readLog(log)}`);
    }
    started = true;
    run(
      join(bin, "createdb"),
      ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", DATABASE],
      "createdb",
    );
    // If the runner dies without calling stop(), do not leave a server behind.
    const onExit = () => stopNow("immediate");
    process.once("exit", onExit);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/${DATABASE}`,
      port,
      dir,
      async stop() {
        process.off("exit", onExit);
        stopNow("fast");
      },
    };
  } catch (error) {
    stopNow("immediate");
    throw error;
  }
}

function postgresIds(): { uid: number; gid: number } {
  const out = run("id", ["postgres"], "id postgres");
  const uid = Number(/uid=(\d+)/.exec(out)?.[1]);
  const gid = Number(/gid=(\d+)/.exec(out)?.[1]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid))
    throw new Error(`cannot read the postgres user: ${out}`);
  return { uid, gid };
}

function readLog(path: string): string {
  try {
    return `\n${readFileSync(path, "utf8")}`;
  } catch {
    return "";
  }
}

if (import.meta.main) {
  const pg = await startPostgres();
  console.log(JSON.stringify({ url: pg.url, dir: pg.dir }));
  const maxSeconds = Number(process.env.MAX_SECONDS ?? 3600);
  const stop = async () => {
    await pg.stop();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  setTimeout(stop, maxSeconds * 1000);
}
