// Pull endpoints (DESIGN §12): consumers lease the same ordered, deadline-bound deliveries the
// dispatcher would send, by long poll or stream, and answer them with acks and nacks. The
// transitions are src/deliveries' (lease.ts, ack.ts, lease-expiry.ts); this module checks the
// endpoint, turns leased rows into messages, sleeps on the hub while there is nothing to take,
// and sweeps lapsed leases on the dispatcher's schedule.
import { EventEmitter } from "node:events";
import { Cron } from "croner";
import type { Config } from "../config.ts";
import type { Database } from "../db/open.ts";
import type { AckResult, LeaseRef, Nack } from "../deliveries/ack.ts";
import { endpointsWithWork, nextDueAt } from "../deliveries/lease.ts";
import type { AttemptEvent } from "../dispatch/dispatcher.ts";
import { Problem } from "../lib/problem.ts";
import type { Clock } from "../lib/time.ts";
import type { Logger } from "../ops/log.ts";
import type { Tracing } from "../ops/tracing.ts";
import type { PullHub } from "./hub.ts";
import type { Pulled } from "./messages.ts";
import { traceAttempts } from "./trace.ts";
import {
  deadStreams,
  endpointCheck,
  expireConsumerLeasesWrite,
  type Purpose,
  pullAckWrite,
  pullLeaseWrite,
  type RetrySettings,
} from "./writes.ts";

export type { Pulled };

export type PullConfig = Pick<Config, "retryBaseMs" | "retryCapMs" | "dispatchCron">;

export interface PullServiceDeps {
  db: Database;
  clock: Clock;
  hub: PullHub;
  logger: Logger;
  config: PullConfig;
  /** One `outboxd.deliver` span per ack, nack or lapsed lease (./trace.ts); none when absent or off. */
  tracing?: Tracing | undefined;
}

export interface Lease {
  data: Pulled[];
  /** When the leases of this batch run out (ms), null for an empty batch. */
  leaseExpiresAt: number | null;
}

export interface PollRequest {
  endpointId: string;
  max: number;
  waitMs: number;
  leaseMs: number;
  /** The consumer's stored token (storedTokenId): it must be live at every lease. */
  holder: string | null;
  /** The client went away: stop waiting. */
  signal?: AbortSignal;
}

export interface StreamOptions {
  max: number;
  leaseMs: number;
  keepaliveMs: number;
  /** The consumer's stored token (storedTokenId): the stream closes when it is revoked. */
  holder?: string | null;
}

/** Where a stream writes; `signal` aborts when the client goes away. */
export interface StreamSink {
  deliver(batch: Pulled[]): Promise<void>;
  keepalive(): Promise<void>;
  signal: AbortSignal;
}

/**
 * What happened to one delivery answered by a consumer or whose lease ran out ("attempt"): the
 * dispatcher's attempt event, as far as a pull attempt has its fields (latency: commit to ack).
 */
export type PullAttempt = Pick<
  AttemptEvent,
  | "deliveryId"
  | "eventId"
  | "endpointId"
  | "aggregate"
  | "sequence"
  | "attempt"
  | "outcome"
  | "latencyMs"
  | "recorded"
>;

/**
 * Leases, acks and lease expiries are bookkeeping like the dispatcher's claims and completions:
 * one lost to a power failure means a redelivery, which at-least-once allows (applyOnce turns
 * it into `duplicate`).
 */
const BOOKKEEPING = { durable: false };

/** One sweep releases at most this many lapsed leases at a time. */
const SWEEP_CHUNK = 500;

/**
 * How often open streams are checked for a revoked token or a deleted or disabled endpoint (one
 * read for all of them, only while a stream is open), so that such a stream closes within 1 s
 * whichever process made the change (DESIGN §12).
 */
export const STREAM_CHECK_MS = 400;

interface OpenStream {
  endpointId: string;
  holder: string | null;
  close(): void;
}

export class PullService extends EventEmitter {
  readonly #deps: PullServiceDeps;
  #cron: Cron | null = null;
  /** Deliveries sent on an open stream of this process: what frees their room when answered. */
  readonly #streamed = new Map<string, () => void>();
  /** The streams open in this process, and the timer that checks them while there are any. */
  readonly #open = new Set<OpenStream>();
  #checker: ReturnType<typeof setInterval> | null = null;

  constructor(deps: PullServiceDeps) {
    super();
    this.#deps = deps;
  }

  get hub(): PullHub {
    return this.#deps.hub;
  }

  /**
   * Throws the problem a consumer gets for anything but a pull endpoint, or (to lease from it) a
   * disabled one. Acks are taken while it is disabled: they only finish what was leased before.
   * (Polls and acks check inside their own write, without this read: see lease and ack.)
   */
  async checkEndpoint(endpointId: string, purpose: Purpose): Promise<void> {
    await this.#deps.db.driver.read(endpointCheck(endpointId, purpose));
  }

  /**
   * Leases what is claimable now (possibly nothing), in one write; with `check`, that write
   * first checks the endpoint as checkEndpoint does.
   */
  async lease(
    endpointId: string,
    limit: number,
    leaseMs: number,
    check = false,
    holder: string | null = null,
  ): Promise<Lease> {
    const { db, clock } = this.#deps;
    const now = clock();
    const data = await db.write(
      pullLeaseWrite(check, { endpointId, now, leaseMs, limit }, holder),
      BOOKKEEPING,
    );
    return { data, leaseExpiresAt: data.length === 0 ? null : now + leaseMs };
  }

  /**
   * Long poll: leases up to `max` deliveries; when there are none, waits (up to `waitMs`) for a
   * wake-up of the endpoint or the next retry falling due, and tries again. Each try checks the
   * endpoint (404, 409) in its write.
   */
  async poll(request: PollRequest): Promise<Lease> {
    const { endpointId, max, waitMs, leaseMs, holder, signal } = request;
    const { hub, clock, db } = this.#deps;
    const until = clock() + waitMs;
    const leave = hub.enter(endpointId);
    try {
      for (;;) {
        const version = hub.version(endpointId);
        const batch = await this.lease(endpointId, max, leaseMs, true, holder);
        const now = clock();
        if (batch.data.length > 0 || now >= until || signal?.aborted) return batch;
        const due = await db.driver.read(nextDueAt(endpointId, now));
        await hub.wait(endpointId, version, Math.min(until, due ?? until), now, signal);
      }
    } finally {
      leave();
    }
  }

  /**
   * Acks and nacks of one endpoint's deliveries, after checking the endpoint in the same write;
   * wakes its consumers when a queue moved.
   */
  async ack(endpointId: string, acks: LeaseRef[], nacks: Nack[]): Promise<AckResult> {
    const { db, clock, hub } = this.#deps;
    const now = clock();
    const result = await db.write(pullAckWrite(endpointId, now, { acks, nacks }, this.#retry()), BOOKKEEPING);
    if (result.answered.length > 0) {
      for (const a of result.answered) this.#answered(a.deliveryId);
      hub.wake([endpointId]);
      for (const a of result.answered) {
        this.emit("attempt", {
          deliveryId: a.deliveryId,
          eventId: a.eventId,
          endpointId,
          aggregate: a.aggregate,
          sequence: a.sequence,
          attempt: a.attempt,
          outcome: a.completion.kind,
          latencyMs: a.completion.kind === "delivered" ? a.completion.latencyMs : null,
          recorded: true,
        } satisfies PullAttempt);
      }
      const tracing = this.#deps.tracing;
      if (tracing?.enabled) {
        const attempts = result.answered.map((a) => ({ ...a, endpointId }));
        await traceAttempts({ ...this.#deps, tracing }, now, attempts, "nacked");
      }
    }
    return result;
  }

  /**
   * A stream (DESIGN §12): leases up to `max` deliveries, hands each to `sink`, and leases more
   * as acks, nacks or lapsed leases free room, until the signal aborts. While nothing can be
   * sent it sleeps on the hub; `keepaliveMs` after its last write it sends a keepalive.
   *
   * It leases only when something may have changed: at the start, after a wake-up of its
   * endpoint, when a lease of its own lapsed or a retry it knows of fell due. A keepalive alone
   * costs a socket write and no query, so idle streams cost nothing while commits and time go by
   * (the sweep wakes endpoints with work a wake-up did not announce: another process's commit).
   * Where no sweep runs in this process, each keepalive looks as well.
   *
   * Every lease checks the endpoint and the token in its own write, and every STREAM_CHECK_MS
   * the open streams are checked together: a stream whose token was revoked, or whose endpoint
   * was deleted or disabled, ends (and leases nothing after).
   */
  async stream(endpointId: string, options: StreamOptions, sink: StreamSink): Promise<void> {
    const { hub, clock, db } = this.#deps;
    const { max, leaseMs, keepaliveMs } = options;
    const ended = new AbortController();
    const signal = AbortSignal.any([sink.signal, ended.signal]);
    const entry: OpenStream = { endpointId, holder: options.holder ?? null, close: () => ended.abort() };
    this.#opened(entry);
    // The deliveries sent on this stream and not answered yet, with when their lease runs out.
    const outstanding = new Map<string, number>();
    const leave = hub.enter(endpointId);
    let lastWrite = clock();
    let look = true;
    // When the next retry of the endpoint falls due, as last looked up (after an empty lease).
    let dueAt: number | null = null;
    try {
      while (!signal.aborted) {
        const version = hub.version(endpointId);
        let now = clock();
        for (const [id, until] of outstanding) {
          if (until > now) continue;
          this.#forget(outstanding, id);
          look = true;
        }
        if (dueAt !== null && dueAt <= now) look = true;
        const room = max - outstanding.size;
        if (look && room > 0) {
          dueAt = null;
          const batch = await this.#streamLease(endpointId, room, leaseMs, entry.holder);
          if (batch === null) break;
          for (const pulled of batch.data) {
            outstanding.set(pulled.deliveryId, batch.leaseExpiresAt as number);
            this.#streamed.set(pulled.deliveryId, () => outstanding.delete(pulled.deliveryId));
          }
          // One write for the batch: a write per message costs a socket write each.
          if (batch.data.length > 0) await sink.deliver(batch.data);
          if (batch.data.length > 0) lastWrite = clock();
          else dueAt = await db.driver.read(nextDueAt(endpointId, clock()));
        }
        look = false;
        now = clock();
        let until = lastWrite + keepaliveMs;
        for (const leaseUntil of outstanding.values()) until = Math.min(until, leaseUntil);
        if (dueAt !== null) until = Math.min(until, dueAt);
        await hub.wait(endpointId, version, until, now, signal);
        if (hub.version(endpointId) !== version) look = true;
        if (!signal.aborted && clock() - lastWrite >= keepaliveMs) {
          await sink.keepalive();
          lastWrite = clock();
          if (!this.#cron) look = true;
        }
      }
    } finally {
      leave();
      this.#closed(entry);
      for (const id of outstanding.keys()) this.#streamed.delete(id);
    }
  }

  /** A stream's lease with the endpoint and token checks; null when either refuses (the stream ends). */
  async #streamLease(endpointId: string, limit: number, leaseMs: number, holder: string | null) {
    try {
      return await this.lease(endpointId, limit, leaseMs, true, holder);
    } catch (error) {
      if (error instanceof Problem) return null;
      throw error;
    }
  }

  #opened(stream: OpenStream): void {
    this.#open.add(stream);
    this.#checker ??= setInterval(() => void this.#checkStreams(), STREAM_CHECK_MS);
  }

  #closed(stream: OpenStream): void {
    this.#open.delete(stream);
    if (this.#open.size > 0 || !this.#checker) return;
    clearInterval(this.#checker);
    this.#checker = null;
  }

  /** Ends the open streams whose token was revoked or whose endpoint is deleted or disabled. */
  async #checkStreams(): Promise<void> {
    if (this.#open.size === 0) return;
    try {
      for (const stream of await this.#deps.db.driver.read(deadStreams([...this.#open]))) stream.close();
    } catch (error) {
      this.#deps.logger.log("error", "pull stream check failed", { error: String(error) });
    }
  }

  #forget(outstanding: Map<string, number>, id: string): void {
    outstanding.delete(id);
    this.#streamed.delete(id);
  }

  /** Sweeps lapsed leases on the dispatcher's schedule (in processes that dispatch). Safe twice. */
  start(): void {
    if (this.#cron) return;
    this.#cron = new Cron(this.#deps.config.dispatchCron, { protect: true }, () => this.sweep());
  }

  stop(): void {
    this.#cron?.stop();
    this.#cron = null;
  }

  /**
   * Lapsed consumer leases become failed attempts; then waiting consumers whose endpoint has
   * claimable work they were not told about (a commit by another process, a retry now due) are
   * woken. One read for all of them, whatever their number.
   */
  async sweep(): Promise<void> {
    const { db, clock, hub, logger } = this.#deps;
    try {
      for (;;) {
        const now = clock();
        const expired = await db.write(
          expireConsumerLeasesWrite(now, this.#retry(), SWEEP_CHUNK),
          BOOKKEEPING,
        );
        if (expired.length > 0) {
          for (const e of expired) this.#answered(e.deliveryId);
          hub.wake(new Set(expired.map((e) => e.endpointId)));
          for (const e of expired) {
            this.emit("attempt", {
              deliveryId: e.deliveryId,
              eventId: e.eventId,
              endpointId: e.endpointId,
              aggregate: e.aggregate,
              sequence: e.sequence,
              attempt: e.attempt,
              outcome: e.completion.kind,
              latencyMs: null,
              recorded: true,
            } satisfies PullAttempt);
          }
          const tracing = this.#deps.tracing;
          if (tracing?.enabled)
            await traceAttempts({ ...this.#deps, tracing }, now, expired, "lease_expired");
        }
        if (expired.length < SWEEP_CHUNK) break;
      }
      const waiting = hub.waiting();
      if (waiting.length > 0) hub.wake(await db.driver.read(endpointsWithWork(waiting, clock())));
    } catch (error) {
      logger.log("error", "pull sweep failed", { error: String(error) });
    }
  }

  /** A delivery was answered (or its lease lapsed): the stream that sent it has room again. */
  #answered(deliveryId: string): void {
    this.#streamed.get(deliveryId)?.();
    this.#streamed.delete(deliveryId);
  }

  /** The backoff of nacks and lapsed leases (a nack may ask for its own delay). */
  #retry(): RetrySettings {
    const { retryBaseMs: baseMs, retryCapMs: capMs } = this.#deps.config;
    return { baseMs, capMs };
  }
}
