// The composition root: builds every component of outboxd from one config and one database,
// and starts and stops them in order. Safe to stop twice.
import { Authenticator } from "./auth/authenticator.ts";
import { bootstrapAdminToken } from "./auth/bootstrap.ts";
import { FanOutExpander } from "./commit/fan-out-expander.ts";
import { CommitService } from "./commit/service.ts";
import type { Config } from "./config.ts";
import { databaseClock } from "./db/db-clock.ts";
import type { Database, WriterPlacement } from "./db/open.ts";
import { deadLetterOrphansWrite } from "./deliveries/writes.ts";
import { type AttemptEvent, Dispatcher } from "./dispatch/dispatcher.ts";
import type { HintedDelivery } from "./dispatch/hints.ts";
import { SecretBox } from "./endpoints/secrets.ts";
import type { Resolver } from "./endpoints/url-guard.ts";
import { EventTypeCatalog } from "./event-types/catalog.ts";
import { enableFailpoints } from "./failpoints.ts";
import { createHttpApp } from "./http/app.ts";
import type { HttpDeps } from "./http/context.ts";
import { metricsResponse } from "./http/routes/operations.ts";
import { type Clock, systemClock } from "./lib/time.ts";
import { beginOpening, type Opening } from "./opening.ts";
import { createLogger, type Logger } from "./ops/log.ts";
import { Metrics } from "./ops/metrics.ts";
import { startTracing, tracingSummary } from "./ops/tracing.ts";
import { ProposalService } from "./proposals/service.ts";
import { PullHub } from "./pull/hub.ts";
import { type PullAttempt, PullService } from "./pull/service.ts";

export interface OutboxdOptions {
  clock?: Clock;
  resolver?: Resolver;
  logger?: Logger;
  /** Run the dispatcher in this process (default true). */
  dispatch?: boolean;
  /** The database already being opened and migrated (src/opening.ts); else begun here. */
  opening?: Opening;
  /**
   * Where a local file's writer runs (db/open.ts): its own thread by default; `here` for tests that
   * run their own operations on the server's Writer (db.writer).
   */
  writer?: WriterPlacement;
}

export interface Outboxd {
  config: Config;
  db: Database;
  logger: Logger;
  http: ReturnType<typeof createHttpApp>;
  /** The same data as /metrics, for the separate metrics listener. */
  metricsResponse(): Promise<Response>;
  dispatcher: Dispatcher | null;
  /** Pull endpoints' consumers (DESIGN §12). */
  pull: PullService;
  stop(): Promise<void>;
}

export async function createOutboxd(config: Config, options: OutboxdOptions = {}): Promise<Outboxd> {
  const logger = options.logger ?? createLogger(config.logLevel);
  enableFailpoints(config.failpoints);
  // Off unless an OTLP endpoint is configured; then the OpenTelemetry SDK is loaded here.
  const tracing = await startTracing(config.tracing, (message, fields) =>
    logger.log("warn", message, fields),
  );
  if (config.tracing) logger.log("info", "tracing on", tracingSummary(config.tracing, process.env));

  const opening = options.opening ?? beginOpening(config, options.writer);
  // The process's first local-time computation loads its time zone (~15 ms on a 2-core VM): the
  // dispatcher's first Cron (croner) would pay it after the database is ready, on the way to
  // /readyz. Paid here instead, while the writer thread opens and migrates the database.
  new Date().getTimezoneOffset();
  const db = await opening.db;
  // Local file: one machine, one clock. Remote database: the database's clock for everyone.
  const shared = options.clock || db.file ? null : databaseClock(db.driver);
  await shared?.sync();
  const clock = options.clock ?? shared?.clock ?? systemClock;
  // None of the components reads or writes the database before the migrations below have been
  // awaited.
  const secretBox = new SecretBox(config.masterKey);

  const dispatcher =
    options.dispatch === false
      ? null
      : new Dispatcher({
          config,
          db,
          clock,
          secretBox,
          logger,
          resolver: options.resolver,
          tracing,
          ...(shared ? { beforeSweep: () => shared.sync() } : {}),
        });
  const metrics = new Metrics();
  dispatcher?.on("attempt", (attempt: AttemptEvent) => metrics.recordAttempt(attempt));
  dispatcher?.on("throttled", (t: { endpointId: string; seconds: number }) =>
    metrics.recordThrottled(t.endpointId, t.seconds),
  );
  const pull = new PullService({ db, clock, hub: new PullHub(), logger, config, tracing });
  pull.on("attempt", (attempt: PullAttempt) => metrics.recordAttempt(attempt));
  const catalog = new EventTypeCatalog({
    db,
    clock,
    mode: config.eventTypes,
    onRefreshError: (error) =>
      logger.log("warn", "event-type catalog refresh failed", { error: String(error) }),
  });
  // New deliveries, from a commit or from a deferred fan-out's expansion, wake whoever sends them.
  const wakeFor = (_count: number, endpointIds: Set<string>, deliveries?: HintedDelivery[]) => {
    // Deliveries named are claimed by id (src/dispatch/hints.ts); unnamed ones (a fan-out
    // expanded later) are found by a scan, which a wake without endpoints asks for.
    if (deliveries) dispatcher?.offer(deliveries);
    dispatcher?.wake(deliveries ? endpointIds : undefined);
    pull.hub.wake(endpointIds);
  };
  const fanOuts = new FanOutExpander({
    db,
    clock,
    onDeliveries: wakeFor,
    onError: (error) => logger.log("warn", "fan-out expansion failed", { error: String(error) }),
  });
  const commits = new CommitService({
    catalog,
    db,
    limits: config,
    clock,
    tracing,
    onDeliveries: wakeFor,
    onDeferredFanOut: () => fanOuts.kick(),
    afterCommit: (ms) => metrics.recordCommit(ms),
  });
  // New heads are leased to this process's dispatcher by their own INSERT (deliveries/enqueue.ts).
  if (dispatcher) db.lend(dispatcher.loan);
  const proposals = new ProposalService({
    db,
    clock,
    commits,
    catalog,
    limits: config,
    ttlMs: config.proposalTtlMs,
    retentionMs: config.retentionMs,
    cron: config.dispatchCron,
    onDecision: (decision, count) => metrics.recordProposalDecision(decision, count),
    onSweepError: (error) => logger.log("warn", "proposal sweep failed", { error: String(error) }),
  });
  const deps: HttpDeps = {
    config,
    db,
    clock,
    auth: new Authenticator(db, config.adminToken, clock),
    commits,
    catalog,
    proposals,
    pull,
    secretBox,
    metrics,
    logger,
    tracing,
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(dispatcher
      ? {
          dispatch: {
            wake: () => {
              dispatcher.wake();
              pull.hub.wake();
            },
            heartbeatAt: () => dispatcher.heartbeatAt(),
            ping: (endpointId: string) => dispatcher.ping(endpointId),
          },
        }
      : {}),
  };
  const http = createHttpApp(deps);

  const applied = await opening.migrations;
  if (applied.length > 0) logger.log("info", "migrations applied", { migrations: applied });
  const orphans = await db.write(deadLetterOrphansWrite(clock()));
  if (orphans > 0) {
    logger.log("warn", "deliveries moved to the dead-letter queue", {
      count: orphans,
      reason: "endpoint_deleted",
    });
  }
  if (config.adminToken === undefined) {
    const path = await bootstrapAdminToken(db, clock());
    if (path) logger.log("info", "created an admin token; it is in this file only", { path });
  }
  if (!secretBox.encrypting) {
    logger.log("warn", "OUTBOXD_MASTER_KEY is not set: endpoint secrets are stored unencrypted");
  }
  if (config.synchronous === "NORMAL" && db.file) {
    logger.log(
      "warn",
      "OUTBOXD_SYNCHRONOUS=NORMAL: durability (DESIGN §1.8) is void: a power loss may undo commits already answered and sent",
    );
  }
  await catalog.load();
  const unsupported = catalog.unsupported();
  if (unsupported.length > 0) {
    logger.log(
      "warn",
      "event types whose schemas have patterns the linear-time engine cannot run or cost more to validate than the limit: their events are refused (422 schema-unsupported) until the schema is replaced",
      { types: unsupported },
    );
  }

  dispatcher?.start();
  fanOuts.start();
  // Proposals expire with the deadlines: in the processes that sweep them.
  if (dispatcher) proposals.start();
  // Lapsed consumer leases likewise.
  if (dispatcher) pull.start();

  let stopped: Promise<void> | null = null;
  return {
    config,
    db,
    logger,
    http,
    metricsResponse: () => metricsResponse(deps),
    dispatcher,
    pull,
    stop() {
      stopped ??= (async () => {
        proposals.stop();
        pull.stop();
        await fanOuts.stop();
        await dispatcher?.stop();
        await db.close();
        await tracing.shutdown();
      })();
      return stopped;
    },
  };
}
