// fly.toml and the Dockerfile agree with the code they deploy: ports, health check routes,
// the metrics listener, the volume under the database file, one always-running Machine, and a
// final image that holds the executable only. No Docker engine or Fly account is needed (none
// exists where these tests usually run); `bun scripts/docker-smoke.ts` builds and runs the image
// where a Docker engine exists.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { localPath } from "../src/db/sqlite.ts";
import { REPO, startChild } from "./helpers/process.ts";
import { waitFor } from "./helpers/receiver.ts";
import { startServer, type TestServer, tempDir } from "./helpers/server.ts";

interface HttpCheck {
  path: string;
  method?: string;
  grace_period?: string;
  interval?: string;
  timeout?: string;
}
interface FlyToml {
  app: string;
  primary_region: string;
  kill_signal?: string;
  kill_timeout?: number;
  build: { dockerfile?: string };
  env: Record<string, string>;
  mounts: { source: string; destination: string }[];
  http_service: {
    internal_port: number;
    force_https: boolean;
    auto_stop_machines: string | boolean;
    auto_start_machines: boolean;
    min_machines_running: number;
    checks: HttpCheck[];
  };
  metrics: { port: number; path: string };
}

const fly = Bun.TOML.parse(readFileSync(join(REPO, "fly.toml"), "utf8")) as unknown as FlyToml;
const dockerfile = readFileSync(join(REPO, "Dockerfile"), "utf8");
/** The configuration outboxd loads on the Machine: fly.toml's [env] plus the secrets. */
const flyConfig = loadConfig({ ...fly.env, OUTBOXD_ADMIN_TOKEN: "x".repeat(32) });

interface Stage {
  from: string;
  name: string | undefined;
  instructions: { op: string; args: string }[];
}

/** The Dockerfile's stages, with comments dropped and `\` continuations joined. */
function stages(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const result: Stage[] = [];
  for (const line of lines) {
    const [, op = "", args = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === "FROM") {
      const [, from = "", name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      result.push({ from, name, instructions: [] });
    } else {
      result.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return result;
}

describe("fly.toml", () => {
  test("names the Dockerfile build and a placeholder app in a primary region", () => {
    expect(fly.build.dockerfile).toBe("Dockerfile");
    expect(fly.app.length).toBeGreaterThan(0);
    expect(fly.primary_region).toMatch(/^[a-z]{3}$/);
  });

  test("[env] is a valid outboxd configuration that listens where the http_service sends traffic", () => {
    expect(fly.http_service.internal_port).toBe(flyConfig.port);
    // The code's default is the same port, so dropping PORT from [env] would change nothing.
    expect(loadConfig({}).port).toBe(fly.http_service.internal_port);
    expect(flyConfig.host).toBe("0.0.0.0");
  });

  test("the database file lives on the volume", () => {
    expect(fly.mounts).toHaveLength(1);
    const file = localPath(flyConfig.databaseUrl);
    expect(file).not.toBeNull();
    expect(dirname(file as string)).toBe(fly.mounts[0]?.destination as string);
  });

  test("exactly one Machine that is never stopped: the dispatcher lives in it", () => {
    expect(["off", false]).toContain(fly.http_service.auto_stop_machines);
    expect(fly.http_service.auto_start_machines).toBe(true);
    expect(fly.http_service.min_machines_running).toBe(1);
    expect(fly.http_service.force_https).toBe(true);
    const text = readFileSync(join(REPO, "fly.toml"), "utf8");
    expect(text).toContain("fly scale count 1");
    expect(text).toContain("never `fly scale count 2`");
  });

  test("[metrics] scrapes the metrics listener that [env] starts", () => {
    expect(flyConfig.metricsPort).toBe(fly.metrics.port);
    expect(fly.metrics.port).not.toBe(fly.http_service.internal_port);
    expect(fly.metrics.path).toBe("/metrics");
  });

  test("shutdown: SIGTERM, with more time than a webhook send may take", () => {
    expect(fly.kill_signal).toBe("SIGTERM");
    expect((fly.kill_timeout ?? 5) * 1000).toBeGreaterThan(flyConfig.sendTimeoutMs);
  });

  describe("against a running outboxd with fly.toml's settings", () => {
    let server: TestServer;
    beforeAll(async () => {
      // fly.toml's [env] except where it points outside a test: its own temp database, port 0.
      const { OUTBOXD_DATABASE_URL: _url, PORT: _port, OUTBOXD_HOST: _host, ...env } = fly.env;
      server = await startServer(env);
    });
    afterAll(async () => {
      await server.stop();
    });

    test("both health checks are GET routes that answer 200", async () => {
      expect(fly.http_service.checks.map((c) => c.path).sort()).toEqual(["/healthz", "/readyz"]);
      for (const check of fly.http_service.checks) {
        expect(check.method ?? "GET").toBe("GET");
        // /readyz waits for the dispatcher's first heartbeat; the grace period covers that.
        const status = await waitFor(`${check.path} 200`, async () => {
          const response = await fetch(server.url + check.path);
          return response.status === 200 && response.status;
        });
        expect(status).toBe(200);
      }
    });
  });

  test("[metrics] path is served by `outboxd serve`'s metrics listener without a token", async () => {
    const dir = tempDir("outboxd-deploy-");
    // fly.toml's [env], but port 0 for both listeners and a temp database.
    const child = startChild([process.execPath, "src/main.ts", "serve"], {
      ...fly.env,
      OUTBOXD_HOST: "127.0.0.1",
      PORT: "0",
      OUTBOXD_METRICS_PORT: "0",
      OUTBOXD_DATABASE_URL: `file:${join(dir, "outboxd.db")}`,
      OUTBOXD_ADMIN_TOKEN: `deploy-admin-${crypto.randomUUID()}`,
    });
    try {
      const url = await child.listening();
      const [, metricsUrl] = await waitFor("the metrics listening line", () =>
        /"msg":"metrics listening","url":"(http:\/\/[^"]+)\/metrics"/.exec(child.stderr()),
      );
      const scraped = await fetch(`${metricsUrl}${fly.metrics.path}`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain("outboxd_pending_deliveries");
      // The public port's /metrics still wants a token.
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
    } finally {
      child.kill("SIGTERM");
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("Dockerfile", () => {
  const all = stages(dockerfile);
  const build = all[0] as Stage;
  const final = all.at(-1) as Stage;
  const args = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);

  test("builds with npm ci and npm run build in a named stage", () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(build.name).toBe("build");
    const runs = args(build, "RUN").join("\n");
    expect(runs).toContain("npm ci");
    expect(runs).toContain("npm run build");
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
    expect(pkg.scripts.build).toBe("bun scripts/build.ts");
  });

  test("the final stage is a slim glibc base holding only the executable, run as serve", () => {
    expect(final.from).toMatch(/^(debian:\S+-slim|gcr\.io\/distroless\/cc)/);
    // Exactly one file comes into the final stage, and it is the built executable.
    expect(args(final, "COPY")).toEqual(["--from=build /src/dist/outboxd /app/outboxd"]);
    expect(args(final, "ADD")).toEqual([]);
    expect(args(final, "CMD")).toEqual(['["/app/outboxd", "serve"]']);
    expect(JSON.parse(args(final, "CMD")[0] as string)).toEqual(["/app/outboxd", "serve"]);
  });

  test("runs as a non-root user, with /data as a volume and the API and metrics ports exposed", () => {
    const [user] = args(final, "USER");
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(args(final, "VOLUME")).toEqual(["/data"]);
    const exposed = args(final, "EXPOSE").flatMap((a) => a.split(/\s+/));
    expect(exposed).toContain(String(fly.http_service.internal_port));
    expect(exposed).toContain(String(fly.metrics.port));
  });

  test("its ENV defaults agree with fly.toml", () => {
    const env = Object.fromEntries(
      args(final, "ENV")
        .join(" ")
        .split(/\s+/)
        .filter(Boolean)
        .map((pair) => pair.split("=") as [string, string]),
    );
    expect(env.OUTBOXD_DATABASE_URL).toBe(fly.env.OUTBOXD_DATABASE_URL);
    expect(env.OUTBOXD_HOST).toBe(fly.env.OUTBOXD_HOST);
    expect(env.PORT).toBe(fly.env.PORT);
  });

  test(".dockerignore keeps node_modules, dist and local databases out of the build context", () => {
    const ignored = readFileSync(join(REPO, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    for (const entry of ["node_modules", "dist", "data", "*.db", ".git"]) expect(ignored).toContain(entry);
    // What the build needs is not ignored.
    for (const needed of ["src", "scripts", "package.json", "package-lock.json", "tsconfig.json"]) {
      expect(ignored).not.toContain(needed);
    }
  });
});

describe("docs/deploy.md", () => {
  const doc = readFileSync(join(REPO, "docs/deploy.md"), "utf8");

  test("creates the volume fly.toml mounts, and sets the secrets outboxd reads", () => {
    expect(/fly volumes create (\S+)/.exec(doc)?.[1]).toBe(fly.mounts[0]?.source as string);
    const secrets = /fly secrets set (.+)/.exec(doc)?.[1] ?? "";
    expect(secrets).toContain("OUTBOXD_ADMIN_TOKEN=");
    expect(secrets).toContain("OUTBOXD_MASTER_KEY=$(openssl rand -base64 32)");
    expect(doc).toContain("fly scale count 1");
  });

  test("the systemd unit's environment is a valid configuration", () => {
    const unit = /```ini\n(\[Unit\][\s\S]*?)```/.exec(doc)?.[1] ?? "";
    const env = Object.fromEntries(
      [...unit.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    expect(Object.keys(env)).toContain("OUTBOXD_DATABASE_URL");
    const config = loadConfig({ ...env, OUTBOXD_ADMIN_TOKEN: "x".repeat(32) });
    expect(config.metricsPort).toBe(fly.metrics.port);
    expect(localPath(config.databaseUrl)).toStartWith("/var/lib/outboxd/");
    expect(unit).toContain("StateDirectory=outboxd");
  });

  test("the commands it names exist", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
    expect(doc).toContain("npm run build");
    expect(doc).toContain("npm run start:deno");
    expect(pkg.scripts["start:deno"]).toBe("deno run -A --no-remote src/deno.ts");
    const help = Bun.spawnSync([process.execPath, "src/main.ts", "help"], { cwd: REPO }).stdout.toString();
    expect(help).toContain("backup FILE");
  });
});
