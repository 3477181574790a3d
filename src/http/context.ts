import type { Hono } from "hono";
import type { Authenticator } from "../auth/authenticator.ts";
import type { TokenIdentity } from "../auth/tokens.ts";
import type { CommitService } from "../commit/service.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/open.ts";
import type { SecretBox } from "../endpoints/secrets.ts";
import type { Resolver } from "../endpoints/url-guard.ts";
import type { EventTypeCatalog } from "../event-types/catalog.ts";
import type { Clock } from "../lib/time.ts";
import type { Logger } from "../ops/log.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { Tracing } from "../ops/tracing.ts";
import type { ProposalService } from "../proposals/service.ts";
import type { PullService } from "../pull/service.ts";
import type { RateLimiter } from "./rate-limit.ts";

/** What the HTTP layer may call on the dispatch side (absent in a process without one). */
export interface DispatchControl {
  /** Wake the dispatcher now (after a replay, an enable). */
  wake(): void;
  /** Ms epoch of the last heartbeat, null before the first. */
  heartbeatAt(): number | null;
  /** Sends a signed outboxd.ping to the endpoint now and reports the receiver's answer. */
  ping(endpointId: string): Promise<{
    statusCode: number | null;
    error: string | null;
    durationMs: number;
    responsePrefix: string | null;
  }>;
}

export interface HttpDeps {
  config: Config;
  db: Database;
  clock: Clock;
  auth: Authenticator;
  commits: CommitService;
  catalog: EventTypeCatalog;
  proposals: ProposalService;
  /** Pull endpoints' consumers (DESIGN §12). */
  pull: PullService;
  secretBox: SecretBox;
  resolver?: Resolver;
  dispatch?: DispatchControl;
  metrics: Metrics;
  logger: Logger;
  /** Server spans and the trace context of commits; NO_TRACING when absent. */
  tracing?: Tracing;
  /** Per-token rate limit; built from the config by createHttpApp when not given, null = off. */
  limiter?: RateLimiter | null;
}

export type AppEnv = { Variables: { identity: TokenIdentity } };
export type App = Hono<AppEnv>;
