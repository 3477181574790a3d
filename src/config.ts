// Configuration comes from environment variables, read and validated once at start. Every
// setting, its default and its meaning are listed here and in docs/configuration.md.
import type { DatabaseConfig } from "./db/open.ts";
import { parseDuration } from "./lib/duration.ts";
import { type TracingSettings, tracingSettings } from "./ops/tracing.ts";

export interface Config extends DatabaseConfig {
  host: string;
  port: number;
  adminToken: string | undefined;
  masterKey: string | undefined;
  dispatchCron: string;
  defaultDeliverWithinMs: number;
  allowPrivateEndpoints: boolean;
  maxBodyBytes: number;
  maxRecordsPerCommit: number;
  maxEventsPerCommit: number;
  maxDocumentBytes: number;
  /** DESIGN §3 limits: an event-type pattern's length and how many an endpoint may have. */
  maxPatternLength: number;
  maxPatternsPerEndpoint: number;
  /** How many deliveries one commit may create (its fan-out); more is 422. */
  maxDeliveriesPerCommit: number;
  /** How far ahead a deliverAfter may be; further is 422 (it would hold its aggregate back). */
  maxDeliverAfterMs: number;
  /** Requests per second per token (token bucket); 0 turns rate limiting off. */
  rateLimit: number;
  /** Bucket size: how many requests a token may send at once after being idle. */
  rateBurst: number;
  metricsPort: number | undefined;
  metricsPublic: boolean;
  leaseMs: number;
  sendTimeoutMs: number;
  concurrency: number;
  endpointConcurrency: number;
  retryBaseMs: number;
  retryCapMs: number;
  secretGraceMs: number;
  retentionMs: number;
  failpoints: string[];
  /** OUTBOXD_ALLOW_FAILPOINTS: also lowers an endpoint's shortest disableAfter to 1 s (DESIGN §19), for tests. */
  allowFailpoints: boolean;
  /** DESIGN §9: `strict` refuses events of unregistered types; `open` accepts them. */
  eventTypes: "strict" | "open";
  /** DESIGN §10: how long a proposal waits for a decision unless it names its own expiresIn. */
  proposalTtlMs: number;
  logLevel: "debug" | "info" | "warn" | "error";
  /** OpenTelemetry tracing from the standard OTEL_* variables; null = off (src/ops/tracing.ts). */
  tracing: TracingSettings | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export const FAILPOINTS = [
  "commit.after_records",
  "commit.after_commit",
  "dispatch.after_claim",
  "dispatch.after_send",
  "fan_out.before_expand",
] as const;

type Env = Record<string, string | undefined>;

/**
 * Settings that no longer exist, each with what replaced it. One that is still set is refused at
 * start (exit 2) with that line, rather than silently ignored.
 */
export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  OUTBOXD_WEBHOOK_CLIENT: "webhooks are always sent with the runtime's fetch",
  OUTBOXD_SEND_THREAD: "webhooks are always sent from the dispatcher's own thread",
  OUTBOXD_DRIVER:
    "a file: database URL always runs on the engine driver, a libSQL server's URL on @libsql/client",
  OUTBOXD_SQLITE:
    "local files always run on the runtime's own SQLite (bun:sqlite under Bun, libsql under Deno)",
  OUTBOXD_WRITER_THREAD: "a local file's writer always runs on a thread of its own",
};

/** Every on/off setting; all of them read by parseBoolean, and documented so. */
export const BOOLEAN_SETTINGS = [
  "OUTBOXD_ALLOW_PRIVATE_ENDPOINTS",
  "OUTBOXD_METRICS_PUBLIC",
  "OUTBOXD_ALLOW_FAILPOINTS",
] as const;
type BooleanSetting = (typeof BOOLEAN_SETTINGS)[number];

/** The one reading of an on/off setting: exactly `1` or `true` is on, `0` or `false` off. */
export function parseBoolean(text: string): boolean | undefined {
  if (text === "1" || text === "true") return true;
  if (text === "0" || text === "false") return false;
  return undefined;
}

/** What is wrong with a database URL, in words that never repeat it; null if nothing. */
function databaseUrlProblem(url: string): string | null {
  if (url.startsWith("file:")) return null;
  if (!/^(libsql|https?|wss?):\/\//.test(url))
    return "must start with file:, libsql://, http(s):// or ws(s)://";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a valid URL";
  }
  // @libsql/client understands these two query parameters and refuses any other.
  for (const key of parsed.searchParams.keys()) {
    if (key !== "authToken" && key !== "tls") return "has a query parameter other than authToken and tls";
  }
  return null;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === "" ? undefined : value;
  };
  const duration = (name: string, fallback: string): number => {
    const text = read(name) ?? fallback;
    const ms = parseDuration(text);
    if (ms === null) problems.push(`${name}=${text} is not a duration like 500ms, 30s, 5m, 24h or 7d`);
    return ms ?? 0;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const text = read(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max) {
      problems.push(`${name}=${text} must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };
  const flag = (name: BooleanSetting): boolean => {
    const text = read(name);
    const value = text === undefined ? false : parseBoolean(text);
    if (value === undefined) problems.push(`${name} must be 1 or true (on), 0 or false (off)`);
    return value ?? false;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const text = read(name);
    if (text === undefined) return fallback;
    const match = allowed.find((a) => a.toLowerCase() === text.toLowerCase());
    if (!match) problems.push(`${name}=${text} must be one of ${allowed.join(", ")}`);
    return match ?? fallback;
  };

  for (const [name, replacement] of Object.entries(REMOVED_SETTINGS))
    if (read(name) !== undefined) problems.push(`${name} is no longer a setting: ${replacement}; unset it`);

  const databaseUrl = read("OUTBOXD_DATABASE_URL") ?? "file:./data/outboxd.db";
  const urlProblem = databaseUrlProblem(databaseUrl);
  // Never the value itself: a URL may carry a password or an authToken.
  if (urlProblem)
    problems.push(`OUTBOXD_DATABASE_URL ${urlProblem} (its value is not shown: it may hold credentials)`);

  const failpoints = (read("OUTBOXD_FAILPOINTS") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of failpoints) {
    if (!(FAILPOINTS as readonly string[]).includes(name)) {
      problems.push(
        `OUTBOXD_FAILPOINTS names an unknown failpoint ${name} (known: ${FAILPOINTS.join(", ")})`,
      );
    }
  }
  const allowFailpoints = flag("OUTBOXD_ALLOW_FAILPOINTS");
  if (failpoints.length > 0 && !allowFailpoints) {
    problems.push(
      "OUTBOXD_FAILPOINTS is set but OUTBOXD_ALLOW_FAILPOINTS is not 1: failpoints kill the process",
    );
  }

  const masterKey = read("OUTBOXD_MASTER_KEY");
  if (masterKey !== undefined && Buffer.from(masterKey, "base64").length !== 32) {
    problems.push("OUTBOXD_MASTER_KEY must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)");
  }
  const adminToken = read("OUTBOXD_ADMIN_TOKEN");
  if (adminToken !== undefined && adminToken.length < 16) {
    problems.push("OUTBOXD_ADMIN_TOKEN must be at least 16 characters");
  }

  // Per token and process: high enough never to throttle honest heavy use (a commit path that
  // does ~10k/s), low enough to stop a runaway client from monopolising the writer.
  const rateLimit = integer("OUTBOXD_RATE_LIMIT", 20_000, 0, 10_000_000);

  const config: Config = {
    databaseUrl,
    databaseAuthToken: read("OUTBOXD_DATABASE_AUTH_TOKEN"),
    synchronous: oneOf("OUTBOXD_SYNCHRONOUS", ["FULL", "NORMAL"] as const, "FULL"),
    busyTimeoutMs: duration("OUTBOXD_BUSY_TIMEOUT", "5s"),
    host: read("OUTBOXD_HOST") ?? "127.0.0.1",
    port: integer("PORT", 8080, 0, 65535),
    adminToken,
    masterKey,
    dispatchCron: read("OUTBOXD_DISPATCH_CRON") ?? "* * * * * *",
    defaultDeliverWithinMs: duration("OUTBOXD_DEFAULT_DELIVER_WITHIN", "24h"),
    allowPrivateEndpoints: flag("OUTBOXD_ALLOW_PRIVATE_ENDPOINTS"),
    maxBodyBytes: integer("OUTBOXD_MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    maxRecordsPerCommit: integer("OUTBOXD_MAX_RECORDS_PER_COMMIT", 100, 1, 10_000),
    maxEventsPerCommit: integer("OUTBOXD_MAX_EVENTS_PER_COMMIT", 100, 1, 10_000),
    maxDocumentBytes: integer("OUTBOXD_MAX_DOCUMENT_BYTES", 64 * 1024, 16, 16 * 1024 * 1024),
    maxPatternLength: integer("OUTBOXD_MAX_PATTERN_LENGTH", 256, 1, 4096),
    maxPatternsPerEndpoint: integer("OUTBOXD_MAX_PATTERNS_PER_ENDPOINT", 100, 1, 10_000),
    maxDeliveriesPerCommit: integer("OUTBOXD_MAX_DELIVERIES_PER_COMMIT", 10_000, 1, 1_000_000),
    maxDeliverAfterMs: duration("OUTBOXD_MAX_DELIVER_AFTER", "30d"),
    rateLimit,
    rateBurst: integer("OUTBOXD_RATE_BURST", Math.max(1, 2 * rateLimit), 1, 100_000_000),
    metricsPort:
      read("OUTBOXD_METRICS_PORT") === undefined ? undefined : integer("OUTBOXD_METRICS_PORT", 0, 0, 65535),
    metricsPublic: flag("OUTBOXD_METRICS_PUBLIC"),
    leaseMs: duration("OUTBOXD_LEASE", "60s"),
    sendTimeoutMs: duration("OUTBOXD_SEND_TIMEOUT", "15s"),
    concurrency: integer("OUTBOXD_CONCURRENCY", 128, 1, 4096),
    endpointConcurrency: integer("OUTBOXD_ENDPOINT_CONCURRENCY", 64, 1, 4096),
    retryBaseMs: duration("OUTBOXD_RETRY_BASE", "5s"),
    retryCapMs: duration("OUTBOXD_RETRY_CAP", "1h"),
    secretGraceMs: duration("OUTBOXD_SECRET_GRACE", "24h"),
    retentionMs: duration("OUTBOXD_RETENTION", "7d"),
    failpoints,
    allowFailpoints,
    eventTypes: oneOf("OUTBOXD_EVENT_TYPES", ["strict", "open"] as const, "open"),
    proposalTtlMs: duration("OUTBOXD_PROPOSAL_TTL", "24h"),
    logLevel: oneOf("OUTBOXD_LOG_LEVEL", ["debug", "info", "warn", "error"] as const, "info"),
    tracing: tracingSettings(read, problems),
  };
  if (config.leaseMs <= config.sendTimeoutMs) {
    problems.push(
      `OUTBOXD_LEASE (${config.leaseMs} ms) must be longer than OUTBOXD_SEND_TIMEOUT (${config.sendTimeoutMs} ms): ` +
        "a lease that expires mid-send lets another dispatcher send the same event again",
    );
  }
  if (config.proposalTtlMs < 1000 || config.proposalTtlMs > 30 * 86_400_000) {
    problems.push("OUTBOXD_PROPOSAL_TTL must be from 1s to 30d (DESIGN §10)");
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
