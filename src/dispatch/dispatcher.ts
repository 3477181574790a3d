// The dispatcher (DESIGN §6): claims due deliveries with a lease, sends them, records each
// outcome (fenced on the lease), and sweeps on a croner schedule for retries, deadlines and
// work committed by other processes. A commit in this process wakes it at once.
//
// A send holds its slot only while the receiver is being asked: outcomes are recorded in
// batches behind it (completions.ts), claims run a window ahead and slots are shared fairly
// and adaptively (slots.ts), so the cost of a delivery is its HTTP exchange plus a share of
// batched bookkeeping, and one endpoint's trouble does not hold up another.
//
// Most deliveries need no claim of their own: a delivery this process
// commits as the head of its queue is leased to this dispatcher by the commit's INSERT, with its
// event handed over in memory (`leases`, deliveries/enqueue.ts); a head that a batch of outcomes
// promotes is claimed in that batch's own transaction, its event read there too. Claims of their
// own remain for hints that found no room then, sweeps, other processes' work and start-up.
import { EventEmitter } from "node:events";
import { Cron } from "croner";
import type { Config } from "../config.ts";
import type { Database } from "../db/open.ts";
import type { WriteLoan } from "../db/writer-ops.ts";
import type { ClaimedDelivery } from "../deliveries/claim.ts";
import type { Completion } from "../deliveries/complete.ts";
import type { HeadLease, HeadLeases, LeasedHead } from "../deliveries/enqueue.ts";
import { expireAllDeadlines } from "../deliveries/expire.ts";
import type { LeaseBudget } from "../deliveries/lease-budget.ts";
import { pruneAll } from "../deliveries/retention.ts";
import type { SecretBox, StoredSecret } from "../endpoints/secrets.ts";
import { activeSecrets } from "../endpoints/secrets.ts";
import type { Resolver } from "../endpoints/url-guard.ts";
import { failpoint } from "../failpoints.ts";
import { memoized } from "../lib/memo.ts";
import type { Clock } from "../lib/time.ts";
import type { Logger } from "../ops/log.ts";
import type { Tracing } from "../ops/tracing.ts";
import { AttemptLog } from "./attempt-log.ts";
import { CompletionQueue, type PendingCompletion } from "./completions.ts";
import { decide } from "./decide.ts";
import { type HintedDelivery, Hints } from "./hints.ts";
import { KnownEndpoints } from "./known-endpoints.ts";
import { claimThroughBucketWrite, rateLimitedEndpoints } from "./rate-limit.ts";
import { scheduleOf } from "./retry-policy.ts";
import { type EndpointToSend, type EventToSend, loadSendContext, type SendContext } from "./send-context.ts";
import { type SendOutcome, sendWebhook, type WebhookMessage } from "./sender.ts";
import { type ClaimRoom, isTrouble, Slots } from "./slots.ts";
import {
  type ClaimAlong,
  claimByIdWrite,
  claimScanWrite,
  completeAndClaimWrite,
  releaseLeasesWrite,
  sendContextOf,
} from "./writes.ts";

export type DispatcherConfig = Pick<
  Config,
  | "dispatchCron"
  | "leaseMs"
  | "sendTimeoutMs"
  | "concurrency"
  | "endpointConcurrency"
  | "retryBaseMs"
  | "retryCapMs"
  | "allowPrivateEndpoints"
  | "retentionMs"
  | "defaultDeliverWithinMs"
>;

export interface DispatcherDeps {
  config: DispatcherConfig;
  db: Database;
  clock: Clock;
  secretBox: SecretBox;
  logger: Logger;
  resolver?: Resolver | undefined;
  /** Runs at the start of every sweep (the shared database clock re-measures its offset). */
  beforeSweep?: () => Promise<void>;
  /** One `outboxd.deliver` span per attempt (src/ops/tracing.ts); none when absent or off. */
  tracing?: Tracing | undefined;
}

/** What happened to one attempt; emitted as "attempt" for metrics, logs and tests. */
export interface AttemptEvent {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  attempt: number;
  outcome: Completion["kind"];
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** False when the lease had been taken over and the result was not recorded. */
  recorded: boolean;
  /** Commit (or deliverAfter) to 2xx, for delivered ones. */
  latencyMs: number | null;
}

/**
 * Claims, completions, expiries and pruning need no fsync of their own: if power fails before
 * the next durable commit, a lost completion means one redelivery (at least once allows it,
 * receivers reject it as a duplicate) and a lost claim or expiry is simply done again.
 */
const BOOKKEEPING = { durable: false };

/**
 * What a claimed delivery carries from its claim to its send: it waits in the slots as it is
 * (no map from delivery ids to claims beside them, set, read and deleted once per delivery).
 */
interface Claim {
  delivery: ClaimedDelivery;
  /** The delivery's endpoint (Slots: where it waits). */
  endpointId: string;
  /** The claim's lease token: only its holder may complete the row. */
  owner: string;
  /** Undefined when it no longer exists (the endpoint was deleted meanwhile). */
  event: EventToSend | undefined;
  endpoint: EndpointToSend | undefined;
  leaseUntil: number;
}

const PRUNE_EVERY_MS = 3_600_000;
/** The longest between two claims through the rate-limited endpoints' buckets. */
const BUCKET_TICK_MS = 100;
/** … and between two while a rate-limited endpoint's tokens wait for room in the slots. */
const BUCKET_ROOM_MS = 10;
/**
 * Outcomes are held for a larger batch (completions.ts HOLD_BATCH, HOLD_MS) while at least this
 * many claimed sends wait to start at each of their endpoints (an endpoint's starting limit,
 * START_LIMIT in slots.ts), so its slots stay busy meanwhile. A higher threshold would write
 * smaller batches, a lower one hold more.
 */
const HOLD_READY = 8;
/**
 * A lease a commit's INSERT took for this dispatcher is given back if the commit has not handed it
 * over after this long (it failed, or named no deliveries): the row is then claimed as usual.
 */
const PROMISE_MS = 2_000;

export class Dispatcher extends EventEmitter {
  readonly #deps: DispatcherDeps;
  /**
   * This dispatcher's id, the prefix of its lease tokens: 96 random bits, as unique among
   * dispatchers as a UUID needs to be here, in 16 characters instead of 36. Every lease token is
   * written in each row it leases.
   */
  readonly #owner = `dsp_${Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("base64url")}`;
  #claims = 0;
  #cron: Cron | null = null;
  #running = false;
  #pumping = false;
  /** The latest pump, so stop() can wait for a claim that is under way. */
  #pumped: Promise<void> = Promise.resolve();
  #again = false;
  readonly #slots: Slots<Claim>;
  /** Each outcome carries the delivery it is of (its attempt event is made once it is written). */
  readonly #completions: CompletionQueue<ClaimedDelivery>;
  readonly #attemptLog: AttemptLog;
  readonly #unwrittenAt = (endpointId: string) => this.#completions.unwrittenAt(endpointId);
  /** Sends started and not finished (their outcome queued), and who waits for there to be none. */
  #sending = 0;
  #sendsEnded: (() => void)[] = [];
  /** Deliveries this process knows may be claimable: claimed by id, without a scan (hints.ts). */
  readonly #hints = new Hints();
  readonly #endpoints = new KnownEndpoints();
  /** Leased to this dispatcher by a commit's INSERT, waiting for that commit to be durable. */
  readonly #promised = new Map<string, LeasedHead>();
  /**
   * On a local file: statements' RETURNING rows are answered, so commits may lease heads to this
   * dispatcher and outcome batches may claim the heads they promote. The remote write path answers
   * them only after the batch has run: there, claims of their own.
   */
  readonly #local: boolean;
  /** For the commits of this process: new heads leased by their INSERT (deliveries/enqueue.ts). */
  readonly leases: HeadLeases = {
    offer: (endpointId) => this.#offerLease(endpointId),
    leased: (head) => {
      this.#promised.set(head.id, head);
      this.#slots.promise(head.endpointId);
    },
  };
  /**
   * The same leases lent to commits wherever the writer runs (db/writer-ops.ts WriteLoan): on the
   * writer thread, a budget of room reserved here for each message of writes, spent there
   * (deliveries/lease-budget.ts); what a commit leased comes back with its answer.
   */
  readonly loan: WriteLoan<LeaseBudget> = {
    live: this.leases,
    reserve: (units) => this.#reserveLeases(units),
    took: (head) => this.leases.leased(head as LeasedHead),
    giveBack: (budget) => {
      for (const endpoint of budget.endpoints) this.#slots.settle(endpoint.id, endpoint.room);
    },
  };
  #heartbeatAt: number | null = null;
  #retryTimer: ReturnType<typeof setTimeout> | null = null;
  #retryAt = Number.POSITIVE_INFINITY;
  #lastPruneAt = 0;
  /**
   * An endpoint's stored secrets, opened once per stored text rather than at every send: opening
   * parses (and, with OUTBOXD_MASTER_KEY, decrypts) the list, and a backlog sends thousands per
   * second to a few endpoints. Keyed by the text itself, so a rotation (a new text) is opened anew;
   * which of the secrets still sign is decided by the time of each send (OpenedSecrets). A text
   * that fails to open is not kept.
   */
  readonly #openSecrets: (stored: string) => OpenedSecrets;

  constructor(deps: DispatcherDeps) {
    super();
    this.#deps = deps;
    this.#local = deps.db.driver.writeGroup === undefined;
    this.#slots = new Slots<Claim>(deps.config);
    this.#openSecrets = memoized((stored: string) => new OpenedSecrets(deps.secretBox.open(stored)), 1024);
    this.#attemptLog = new AttemptLog(deps.logger);
    this.#completions = new CompletionQueue<ClaimedDelivery>({
      write: async (items) => {
        // The queued outcomes are CompletionItems themselves: written as they are.
        const { recorded, claimed, unclaimed } = await deps.db.write(
          completeAndClaimWrite(items, this.#claimAlong(), {
            deliverWithinMs: this.#deps.config.defaultDeliverWithinMs,
          }),
          BOOKKEEPING,
        );
        if (claimed) {
          failpoint("dispatch.after_claim");
          this.leasedBy.outcomes += claimed.rows.length;
          this.#hold(claimed.rows, claimed.claimedAt, () => claimed.owner, claimed.context);
        }
        // The next events of the queues these completions emptied: claimable now, by id.
        this.#hints.offer(unclaimed);
        if (!this.#local && recorded.some(Boolean)) {
          // A remote database answers those heads with nothing (the remote write path cannot
          // return a hint's rows): a scan finds them now, not at the next sweep.
          this.#hints.scanNow();
          queueMicrotask(() => this.wake(new Set(items.map((item) => item.attempt.endpointId))));
        }
        return recorded;
      },
      written: (items, recorded) => this.#written(items, recorded),
      // Sends lined up at each of their endpoints: a successor these outcomes would promote would
      // wait behind those anyway. An endpoint with none lined up never waits for another's batch.
      hold: (endpointIds) => {
        for (const id of endpointIds) if (this.#slots.readyAt(id) < HOLD_READY) return false;
        return true;
      },
      logger: deps.logger,
      clock: deps.clock,
    });
  }

  /**
   * How the deliveries this dispatcher sent were leased to it: by the commit's own INSERT, in a
   * batch of outcomes' transaction (promoted heads), or by a claim of their own (hints, scans).
   */
  readonly leasedBy = { commit: 0, outcomes: 0, claim: 0 };

  /** Sends under way (the receiver has not answered yet). */
  get inFlight(): number {
    return this.#slots.inFlight;
  }

  heartbeatAt(): number | null {
    return this.#heartbeatAt;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#attemptLog.start();
    this.#cron = new Cron(this.#deps.config.dispatchCron, { protect: true }, () => this.sweep());
    void this.sweep();
  }

  /** Stops claiming, lets in-flight sends finish (at most `graceMs`), and resolves. Safe twice. */
  async stop(graceMs = this.#deps.config.sendTimeoutMs + 1000): Promise<void> {
    this.#running = false;
    this.#cron?.stop();
    this.#cron = null;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    if (this.#bucketTimer) clearTimeout(this.#bucketTimer);
    this.#bucketTimer = null;
    await this.#bucketClaim;
    // A claim already under way still starts its sends; wait for it so they are waited for too
    // (otherwise they outlive the database and stay leased until their lease runs out).
    await this.#pumped;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      (async () => {
        // Deliveries claimed ahead are sent too (they are leased to us); then every outcome
        // is written before the database may close.
        while (this.#sending > 0) await this.#sendsEnd();
        await this.#completions.idle();
        // Leases commits took for this dispatcher that it will no longer send: given back now
        // rather than left to run out.
        await this.#giveUpPromises(Number.POSITIVE_INFINITY);
      })(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
    this.#attemptLog.stop();
  }

  /** Resolves when no send is under way. */
  #sendsEnd(): Promise<void> {
    if (this.#sending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#sendsEnded.push(resolve));
  }

  /**
   * Claim and send now (after a commit, a replay, a completion). Coalesces concurrent calls.
   * `endpointIds`: the endpoints that have new work (a commit's); when every one of them already
   * holds enough claimed ahead, no claim is made now: theirs follows as those are used up.
   */
  wake(endpointIds?: Iterable<string>): void {
    if (!this.#running) return;
    // Woken without endpoints (the sweep, a retry timer, a replay): work no hint names may be due.
    if (!endpointIds) this.#hints.scanNow();
    // No hint kept and no scan due: a claim now would take nothing (draining a backlog, 8,310 of
    // 8,319 wakes after sends and outcomes found nothing).
    else if (!this.#hints.due(this.#deps.clock()) || !this.#wantsMore(endpointIds)) return;
    this.#pumpNow();
  }

  /** Whether a claim is due for any of these endpoints (Slots.wantsMore). */
  #wantsMore(endpointIds: Iterable<string>): boolean {
    for (const id of endpointIds) if (this.#slots.wantsMore(id)) return true;
    return false;
  }

  /** A send ended and a claim is due at its endpoint: wake(), without a list of one per send. */
  #wakeAfterSend(): void {
    if (this.#running && this.#hints.due(this.#deps.clock())) this.#pumpNow();
  }

  #pumpNow(): void {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumped = this.#pump();
  }

  /**
   * Deliveries this process just committed: claimed by id when there is room (hints.ts). Those
   * that are not the head of their queue yet are claimed when their predecessor's completion
   * promotes them.
   */
  offer(deliveries: Iterable<HintedDelivery>): void {
    if (!this.#running) return;
    const leased: LeasedHead[] = [];
    const hinted: HintedDelivery[] = [];
    for (const delivery of deliveries) {
      const head = this.#promised.get(delivery.id);
      if (head) {
        // Leased by the commit's INSERT, which is durable now: sent without a claim.
        this.#promised.delete(delivery.id);
        this.#slots.settle(head.endpointId);
        leased.push(head);
      } else if (!this.#endpoints.isPull(delivery.endpointId)) hinted.push(delivery);
    }
    this.#hints.offer(hinted);
    if (leased.length === 0) return;
    failpoint("dispatch.after_claim");
    this.leasedBy.commit += leased.length;
    this.#adopt(leased);
  }

  /** A lease for a commit's new head, when this dispatcher has room and knows the endpoint as it is. */
  #offerLease(endpointId: string): HeadLease | null {
    if (!this.#running || !this.#local) return null;
    const endpoint = this.#endpoints.webhook(endpointId);
    if (!endpoint || this.#slots.roomAt(endpointId) <= 0) return null;
    return {
      owner: this.#nextOwner(),
      leaseMs: this.#deps.config.leaseMs,
      endpointVersion: endpoint.updatedAt,
    };
  }

  /**
   * Room at every endpoint this dispatcher could take a commit's new head for, up to `units` each,
   * promised until the budget is given back (see `loan`).
   */
  #reserveLeases(units: number): LeaseBudget | null {
    if (!this.#running || !this.#local || units <= 0) return null;
    const endpoints: LeaseBudget["endpoints"] = [];
    for (const endpoint of this.#endpoints.webhooks()) {
      const room = Math.min(units, this.#slots.roomAt(endpoint.id));
      if (room <= 0) continue;
      this.#slots.promise(endpoint.id, room);
      endpoints.push({ id: endpoint.id, version: endpoint.updatedAt, room });
    }
    if (endpoints.length === 0) return null;
    return { owner: this.#nextOwner(), leaseMs: this.#deps.config.leaseMs, endpoints };
  }

  /** A fresh lease token per claim: even this process's own stale claim cannot complete a row. */
  #nextOwner(): string {
    this.#claims += 1;
    return `${this.#owner}:${this.#claims}`;
  }

  /** Heads leased by this process's commits, now durable: they wait in the slots like claimed ones. */
  #adopt(heads: LeasedHead[]): void {
    const byLeasedAt = new Map<number, LeasedHead[]>();
    for (const head of heads) {
      const same = byLeasedAt.get(head.leasedAt);
      if (same) same.push(head);
      else byLeasedAt.set(head.leasedAt, [head]);
    }
    for (const [leasedAt, group] of byLeasedAt) {
      const owners = new Map(group.map((h) => [h.id, h.owner]));
      const context: SendContext = {
        events: group.map((h) => ({
          id: h.eventId,
          type: h.type,
          aggregate: h.aggregate,
          sequence: h.sequence,
          payload: h.payload,
          occurredAt: h.leasedAt,
          traceparent: h.traceparent,
        })),
        endpoints: [],
      };
      for (const endpointId of new Set(group.map((h) => h.endpointId))) {
        const endpoint = this.#endpoints.webhook(endpointId);
        if (endpoint) context.endpoints.push(endpoint);
      }
      const rows: ClaimedDelivery[] = group.map((h) => ({
        id: h.id,
        eventId: h.eventId,
        endpointId: h.endpointId,
        aggregate: h.aggregate,
        sequence: h.sequence,
        previousSequence: h.previousSequence,
        attemptCount: 1,
        availableAt: h.availableAt,
        deliverBy: h.deliverBy,
      }));
      this.#hold(rows, leasedAt, (d) => owners.get(d.id) as string, context);
    }
  }

  /**
   * Leases a commit's INSERT took that no commit handed over in PROMISE_MS (it failed, or did not
   * name its deliveries): given back, so the rows are claimed as usual.
   */
  async #giveUpPromises(now: number): Promise<void> {
    // Most sweeps find none (a commit under way holds its promises for milliseconds): the first
    // promised, in the order the commits took them, is about the oldest.
    const first = this.#promised.values().next().value;
    if (first === undefined || first.leasedAt >= now - PROMISE_MS) return;
    const stale = [...this.#promised.values()].filter((head) => head.leasedAt < now - PROMISE_MS);
    for (const head of stale) {
      this.#promised.delete(head.id);
      this.#slots.settle(head.endpointId);
    }
    await this.#deps.db.write(releaseLeasesWrite(stale.map(({ id, owner }) => ({ id, owner }))), BOOKKEEPING);
  }

  /**
   * Wakes at `at`, when a retry this process scheduled falls due, so a short backoff is not
   * stretched to the sweep period. One timer: the earliest wins.
   */
  #wakeAt(at: number): void {
    if (!this.#running || at >= this.#retryAt) return;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryAt = at;
    this.#retryTimer = setTimeout(
      () => {
        this.#retryTimer = null;
        this.#retryAt = Number.POSITIVE_INFINITY;
        this.wake();
      },
      Math.max(0, at - this.#deps.clock()),
    );
  }

  /**
   * Rate-limited endpoints (DESIGN §19, rate-limit.ts): while any exists, their deliveries are
   * claimed through their buckets every BUCKET_TICK_MS at most (sooner when a token comes sooner).
   */
  #bucketTimer: ReturnType<typeof setTimeout> | null = null;
  #bucketClaim: Promise<void> = Promise.resolve();
  #rateLimited = false;
  #bucketAt = 0;

  #scheduleBuckets(inMs: number): void {
    if (!this.#running || !this.#rateLimited || this.#bucketTimer) return;
    this.#bucketTimer = setTimeout(() => {
      this.#bucketTimer = null;
      this.#bucketClaim = this.#claimThroughBuckets();
    }, inMs);
  }

  async #claimThroughBuckets(): Promise<void> {
    let next = BUCKET_TICK_MS;
    try {
      const { config, db, clock } = this.#deps;
      const now = clock();
      const seconds = this.#bucketAt === 0 ? 0 : Math.min(1, (now - this.#bucketAt) / 1000);
      this.#bucketAt = now;
      const endpointIds = await db.driver.read(rateLimitedEndpoints());
      this.#rateLimited = endpointIds.length > 0;
      const room = this.#slots.claimRoom();
      for (const endpointId of endpointIds) {
        const owner = this.#nextOwner();
        const claimed = await db.write(
          claimThroughBucketWrite({
            owner,
            now,
            leaseMs: config.leaseMs,
            endpointId,
            room: room.endpointRoom[endpointId] ?? room.endpointLimit,
          }),
          BOOKKEEPING,
        );
        if (claimed.throttled) this.emit("throttled", { endpointId, seconds });
        if (claimed.nextInMs !== null) next = Math.min(next, claimed.nextInMs);
        if (claimed.roomBound) next = Math.min(next, BUCKET_ROOM_MS);
        if (claimed.rows.length > 0) {
          this.leasedBy.claim += claimed.rows.length;
          await this.#addClaimed(claimed.rows, owner, now);
        }
      }
    } catch (error) {
      this.#deps.logger.log("error", "rate-limited claim failed", { error: String(error) });
    }
    this.#scheduleBuckets(next);
  }

  /** The scheduled pass: heartbeat, deadlines, retention, then a claim. */
  async sweep(): Promise<void> {
    if (!this.#running) return;
    try {
      this.#rateLimited = (await this.#deps.db.driver.read(rateLimitedEndpoints())).length > 0;
      this.#scheduleBuckets(0);
    } catch (error) {
      this.#deps.logger.log("warn", "could not read the rate-limited endpoints", { error: String(error) });
    }
    try {
      await this.#deps.beforeSweep?.();
    } catch (error) {
      this.#deps.logger.log("warn", "could not read the database clock", { error: String(error) });
    }
    const now = this.#deps.clock();
    this.#heartbeatAt = now;
    try {
      await this.#giveUpPromises(now);
      // Until none is left: a backlog past its deadline (after an outage, say) is dead-lettered
      // in this sweep, not a chunk per sweep while it blocks its aggregates.
      const expired = await expireAllDeadlines(this.#deps.db, now, BOOKKEEPING);
      if (expired > 0) {
        this.#deps.logger.log("warn", "deliveries moved to the dead-letter queue", {
          count: expired,
          reason: "deadline_exceeded",
        });
        this.emit("expired", expired);
      }
      if (now - this.#lastPruneAt >= PRUNE_EVERY_MS) {
        this.#lastPruneAt = now;
        await this.pruneNow(now);
      }
    } catch (error) {
      this.#deps.logger.log("error", "sweep failed", { error: String(error) });
    }
    this.wake();
  }

  /** Deletes delivered rows and attempts older than the retention period; returns the counts. */
  async pruneNow(now = this.#deps.clock()) {
    return pruneAll(this.#deps.db, { before: now - this.#deps.config.retentionMs, now }, BOOKKEEPING);
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      for (;;) {
        this.#again = false;
        if (!this.#running) break;
        // Room is kept for the sends whose outcomes are not written yet: the batch that writes them
        // claims the heads it promotes in its own transaction, their events read there (#claimAlong).
        // Claimed here instead, those heads cost a claim of their own and a read of their events on
        // this thread, for about a third of a backlog's deliveries.
        const room = this.#slots.claimRoom(this.#unwrittenAt);
        const { ids, endpointIds, scan } = this.#hints.take(room, this.#deps.clock());
        if (ids.length === 0 && !scan) break;
        const { owner, claimed, scanned, claimedAt } = await this.#claim(ids, scan);
        // Endpoints hinted but never read: their kind is learned with the claimed ones' (pull
        // endpoints' deliveries are not hinted again).
        const unknown = endpointIds.filter((id) => !this.#endpoints.knows(id));
        if (claimed.length > 0 || unknown.length > 0)
          await this.#addClaimed(claimed, owner, claimedAt, unknown);
        if (scan) this.#hints.scanned(scan, scanned, this.#deps.clock());
        // Again while hints were left over for lack of room, a scan filled its room (more may
        // wait), or someone woke us meanwhile.
        const more = ids.length >= room.limit || (scan !== null && scanned.length >= scan.limit);
        if (!more && !this.#again && (this.#hints.size === 0 || claimed.length === 0)) break;
      }
    } catch (error) {
      this.#deps.logger.log("error", "claim failed", { error: String(error) });
    } finally {
      this.#pumping = false;
    }
  }

  /** One writer operation: the hinted ids by primary key, then (when due) a scan for the rest. */
  async #claim(
    ids: string[],
    scan: ClaimRoom | null,
  ): Promise<{ owner: string; claimed: ClaimedDelivery[]; scanned: ClaimedDelivery[]; claimedAt: number }> {
    const { config, db, clock } = this.#deps;
    const claimedAt = clock();
    const owner = this.#nextOwner();
    const lease = { owner, now: claimedAt, leaseMs: config.leaseMs };
    // Two operations queued together: the writer runs them in one group (one transaction), and
    // each ends with its one returning write, which the remote write path needs (remote-writer.ts).
    // A claim by id with no ids is not posted (a scan alone, every SCAN_PAUSE_MS of a drain).
    const [byId, scanned] = await Promise.all([
      ids.length === 0 ? [] : db.write(claimByIdWrite({ ...lease, ids }), BOOKKEEPING),
      scan ? db.write(claimScanWrite({ ...lease, ...scan }), BOOKKEEPING) : [],
    ]);
    const claimed = byId.length === 0 ? scanned : [...byId, ...scanned];
    if (claimed.length > 0) failpoint("dispatch.after_claim");
    this.leasedBy.claim += claimed.length;
    return { owner, claimed, scanned, claimedAt };
  }

  /** Claimed deliveries wait in the slots until they may start; their events are loaded now. */
  async #addClaimed(
    claimed: ClaimedDelivery[],
    owner: string,
    claimedAt: number,
    alsoEndpoints: string[] = [],
  ): Promise<void> {
    const context = await this.#deps.db.driver.read(sendContextOf(claimed, alsoEndpoints));
    this.#hold(claimed, claimedAt, () => owner, context);
  }

  /** Leased deliveries (claimed at `claimedAt`) wait in the slots until they may start. */
  #hold(
    claimed: ClaimedDelivery[],
    claimedAt: number,
    ownerOf: (delivery: ClaimedDelivery) => string,
    context: SendContext,
  ): void {
    this.#endpoints.learn(context.endpoints);
    if (claimed.length === 0) return;
    const { leaseMs, sendTimeoutMs } = this.#deps.config;
    const leaseUntil = claimedAt + leaseMs;
    const events = new Map<string, EventToSend>();
    for (const event of context.events) events.set(event.id, event);
    const endpoints = new Map<string, EndpointToSend>();
    for (const endpoint of context.endpoints) endpoints.set(endpoint.id, endpoint);
    const claims: Claim[] = [];
    for (const delivery of claimed) {
      claims.push({
        delivery,
        endpointId: delivery.endpointId,
        owner: ownerOf(delivery),
        event: events.get(delivery.eventId),
        endpoint: endpoints.get(delivery.endpointId),
        leaseUntil,
      });
    }
    // A send must be able to end (time out) well inside the lease that began at the claim: one
    // that has not started by halfway through the spare time is left to be claimed again.
    this.#slots.add(claims, claimedAt + (leaseMs - sendTimeoutMs) / 2);
    this.#startReady();
  }

  /**
   * The claim a batch of outcomes makes in its transaction of the heads it promotes (see
   * completeAndClaim): on a local file, while running, within the room the slots have now.
   */
  #claimAlong(): ClaimAlong | null {
    if (!this.#local || !this.#running) return null;
    const now = this.#deps.clock();
    return {
      owner: this.#nextOwner(),
      now,
      leaseMs: this.#deps.config.leaseMs,
      room: this.#slots.claimRoom(),
    };
  }

  /** Starts every claimed delivery the slots allow now. */
  #startReady(): void {
    const now = this.#deps.clock();
    for (let claim = this.#slots.next(now, left); claim; claim = this.#slots.next(now, left)) {
      this.#sending += 1;
      void this.#deliver(claim.delivery, claim);
    }
    // Fewer sends lined up now: held outcomes may have to be written, so their successors are promoted.
    if (this.#completions.size > 0) this.#completions.nudge();
  }

  /**
   * One send and its outcome, queued; never rejects (what throws is logged). One async function
   * per send (with #send returning sendWebhook's promise as it is): each one more is a promise
   * and a resumption per delivery.
   */
  async #deliver(delivery: ClaimedDelivery, claim: Claim): Promise<void> {
    try {
      const { clock } = this.#deps;
      const startedAt = clock();
      let trouble = false;
      let outcome: SendOutcome;
      // The attempt's outboxd.deliver span (src/ops/tracing.ts); tracing off: none, the stored context sent as it is.
      const tracing = this.#deps.tracing;
      const parent = claim.event?.traceparent ?? null;
      const span = tracing?.enabled ? tracing.deliverBegun(parent) : null;
      try {
        outcome = await this.#send(delivery, claim, startedAt, span === null ? parent : span.traceparent);
        if (span !== null) tracing?.deliverEnded(span, delivery, delivery.attemptCount, outcome);
        trouble = isTrouble(outcome.statusCode);
      } catch (error) {
        const failed = { statusCode: null, error: String(error) };
        if (span !== null) tracing?.deliverEnded(span, delivery, delivery.attemptCount, failed);
        throw error;
      } finally {
        // The slot is free as soon as the receiver has answered; the outcome is written behind it.
        const more = this.#slots.finished(delivery.endpointId, startedAt, trouble, clock());
        this.#startReady();
        // Room again at this endpoint: hinted deliveries are claimed now, unnamed ones by the next scan.
        if (more) this.#wakeAfterSend();
      }
      this.#queueOutcome(delivery, claim, startedAt, outcome);
    } catch (error) {
      this.#deps.logger.log("error", "delivery failed", { id: delivery.id, error: String(error) });
    } finally {
      this.#sending -= 1;
      if (this.#sending === 0) for (const resolve of this.#sendsEnded.splice(0)) resolve();
    }
  }

  /** An attempt's outcome, decided and queued to be written (completions.ts). */
  #queueOutcome(delivery: ClaimedDelivery, claim: Claim, startedAt: number, outcome: SendOutcome): void {
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    if (ok) failpoint("dispatch.after_send");
    const { retryBaseMs: baseMs, retryCapMs: capMs } = this.#deps.config;
    const schedule = scheduleOf(claim.endpoint?.retrySchedule);
    const completion = decide(delivery, outcome, this.#deps.clock(), { baseMs, capMs, schedule });
    if (completion.kind === "retry") this.#wakeAt(completion.nextAttemptAt);
    this.#completions.push({
      attempt: {
        deliveryId: delivery.id,
        owner: claim.owner,
        endpointId: delivery.endpointId,
        startedAt,
        durationMs: outcome.durationMs,
        statusCode: outcome.statusCode,
        error: outcome.error,
        responsePrefix: outcome.responsePrefix,
        sent: { rid: delivery.rid, aggregate: delivery.aggregate, sequence: delivery.sequence },
      },
      completion,
      leaseUntil: claim.leaseUntil,
      context: delivery,
    });
  }

  /** A batch of outcomes was written: log and announce each attempt; successors may be due. */
  #written(items: PendingCompletion<ClaimedDelivery>[], recorded: boolean[]): void {
    const endpointIds = new Set<string>();
    for (let i = 0; i < items.length; i++) {
      const {
        attempt: record,
        completion,
        context: delivery,
      } = items[i] as PendingCompletion<ClaimedDelivery>;
      const attempt: AttemptEvent = {
        deliveryId: delivery.id,
        eventId: delivery.eventId,
        endpointId: delivery.endpointId,
        aggregate: delivery.aggregate,
        sequence: delivery.sequence,
        attempt: delivery.attemptCount,
        outcome: completion.kind,
        statusCode: record.statusCode,
        error: record.error,
        durationMs: record.durationMs,
        recorded: recorded[i] === true,
        latencyMs: completion.kind === "delivered" ? completion.latencyMs : null,
      };
      this.#attemptLog.record(attempt);
      this.emit("attempt", attempt);
      endpointIds.add(record.endpointId);
    }
    // Delivered rows made their queues' next events heads: claim them, where there is room.
    this.wake(endpointIds);
  }

  /** One send; whatever stops it before the request is made is an outcome too, never a rejection. */
  #send(
    delivery: ClaimedDelivery,
    { event, endpoint }: Claim,
    startedAt: number,
    traceparent: string | null,
  ): Promise<SendOutcome> {
    const { config } = this.#deps;
    // The endpoint was deleted between claim and send; its deliveries are being dead-lettered.
    if (!event || !endpoint) return failedBeforeSend("endpoint or event no longer exists");
    let secrets: string[];
    try {
      secrets = this.#openSecrets(endpoint.secrets).activeAt(startedAt);
    } catch (error) {
      // E.g. another OUTBOXD_MASTER_KEY. A failed attempt, not a throw: a throw would leave the row
      // leased, re-claimed each time the lease ran out, with nothing in last_error or the log.
      return failedBeforeSend(`cannot open the endpoint's signing secrets: ${String(error)}`);
    }
    return sendWebhook(toMessage(event, delivery, traceparent), {
      url: endpoint.url,
      secrets,
      timeoutMs: config.sendTimeoutMs,
      allowPrivate: config.allowPrivateEndpoints,
      resolver: this.#deps.resolver,
      now: startedAt,
    });
  }

  /** POST /v1/endpoints/{id}/test: a signed outboxd.ping, sent now, not stored. */
  async ping(endpointId: string) {
    const { db, clock, secretBox, config } = this.#deps;
    const context = await db.driver.read(loadSendContext([], [endpointId]));
    const endpoint = context.endpoints.find((e) => e.id === endpointId);
    if (!endpoint) throw new Error(`endpoint ${endpointId} does not exist`);
    const now = clock();
    const outcome = await sendWebhook(
      {
        id: crypto.randomUUID(),
        type: "outboxd.ping",
        aggregate: `outboxd/ping/${endpointId}`,
        sequence: 0,
        previousSequence: null,
        payload: JSON.stringify({ endpointId }),
        occurredAt: now,
        attempt: 1,
        traceparent: null,
      },
      {
        url: endpoint.url,
        secrets: activeSecrets(secretBox.open(endpoint.secrets), now),
        timeoutMs: config.sendTimeoutMs,
        allowPrivate: config.allowPrivateEndpoints,
        resolver: this.#deps.resolver,
        now,
      },
    );
    return {
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
      responsePrefix: outcome.responsePrefix,
    };
  }
}

/** A claimed delivery that waited too long for its slot: left to be claimed again (nothing to undo). */
function left(): void {}

/** The outcome of a send stopped before its request was made. */
function failedBeforeSend(error: string): Promise<SendOutcome> {
  return Promise.resolve({ statusCode: null, error, responsePrefix: null, retryAfter: null, durationMs: 0 });
}

function toMessage(
  event: EventToSend,
  delivery: ClaimedDelivery,
  traceparent: string | null,
): WebhookMessage {
  return {
    id: event.id,
    type: event.type,
    aggregate: event.aggregate,
    sequence: event.sequence,
    previousSequence: delivery.previousSequence,
    payload: event.payload,
    occurredAt: event.occurredAt,
    attempt: delivery.attemptCount,
    traceparent,
  };
}

/**
 * An endpoint's opened secrets and those that sign (activeSecrets), the latter worked out again
 * only once the time passes the first expiry among them (or goes back): not two lists per send.
 */
export class OpenedSecrets {
  readonly #all: StoredSecret[];
  #active: string[] = [];
  /** `#active` holds from `#from` until before `#until`. */
  #from = Number.POSITIVE_INFINITY;
  #until = Number.NEGATIVE_INFINITY;

  constructor(all: StoredSecret[]) {
    this.#all = all;
  }

  activeAt(now: number): string[] {
    if (now < this.#from || now >= this.#until) {
      this.#active = activeSecrets(this.#all, now);
      this.#from = now;
      this.#until = Number.POSITIVE_INFINITY;
      for (const { expiresAt } of this.#all)
        if (expiresAt !== null && expiresAt > now) this.#until = Math.min(this.#until, expiresAt);
    }
    return this.#active;
  }
}
