// Which claimed deliveries may be sent now, and how much to claim next (DESIGN §6 limits).
//
// - A global pool of `concurrency` sends, shared fairly: ready deliveries start round-robin
//   across endpoints, and an endpoint with nothing in flight may always start one send even
//   when the pool is full. Receivers that never answer can fill the pool; they cannot keep a
//   healthy endpoint waiting for one of their timeouts. The default pool (128) is twice the
//   default endpoint limit: eight that never answer hold 8 each (START_LIMIT), and a healthy
//   endpoint still gets its 64 (a pool of 64 would leave it one send at a time).
// - Per endpoint, an adaptive limit between 1 and `endpointConcurrency` (additive increase,
//   multiplicative decrease): a send that times out, cannot connect, or is told to slow down
//   (429, 502, 503, 504) halves it, once per round of sends; each success adds one. An endpoint
//   starts at START_LIMIT and earns the rest by answering (one more per answer: the limit
//   doubles each round), so receivers that never answer hold no more than 8 each, while a
//   healthy one soon has `endpointConcurrency` in flight. An endpoint that goes idle keeps what
//   it earned: under a commit flood a round is one busy event-loop turn (tens of ms), so
//   starting each burst again at 8 would put rounds of ramp into its tail latency.
//   An endpoint in trouble ends up with one probe in flight and recovers as soon as it answers.
// - Claims run ahead: per healthy endpoint up to CLAIM_AHEAD times more than it may send, kept here,
//   so a slot freed by an answer is refilled at once instead of after a claim has waited its
//   turn at the single writer, and one claim serves dozens of sends. The next claim for an
//   endpoint is made when half of what it holds ahead is used up, not on every wake. An
//   endpoint in trouble holds only as many ahead as it may send (they would wait for its
//   timeouts). Claimed rows carry their lease; a crash loses nothing.
import type { ClaimedDelivery } from "../deliveries/claim.ts";

export interface SlotLimits {
  concurrency: number;
  endpointConcurrency: number;
}

/** What waits for a slot: a claimed delivery, or whatever the caller keeps with it (its endpoint known). */
export interface Slotted {
  endpointId: string;
}

interface Ready<T extends Slotted> {
  delivery: T;
  /** After this a send could outlive the lease: such a delivery is left to be claimed again. */
  startBy: number;
}

/**
 * Claimed deliveries in the order they may start: a list and the position of its first, not an
 * array emptied with shift(). JSC turns a long array that is shifted into another kind of storage
 * (ArrayStorage), and then every optimized access to it here missed its inline cache: draining a
 * backlog, 1,504 OSR exits in next() over 20,000 deliveries (and in add, finished, wantsMore), each
 * a jump back to the baseline code, and recompilations.
 */
class ReadyQueue<T extends Slotted> {
  #items: (Ready<T> | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(ready: Ready<T>): void {
    this.#items.push(ready);
  }

  /** The first, or undefined when empty. */
  first(): Ready<T> | undefined {
    return this.#items[this.#head];
  }

  /** Removes and returns the first, or undefined when empty. */
  take(): Ready<T> | undefined {
    const items = this.#items;
    if (this.#head >= items.length) return undefined;
    const ready = items[this.#head];
    items[this.#head] = undefined;
    this.#head += 1;
    if (this.#head === items.length) {
      // Empty: start over at the front of the same array.
      items.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= items.length) {
      // A long run of takes with more behind: the taken half is dropped.
      this.#items = items.slice(this.#head);
      this.#head = 0;
    }
    return ready;
  }
}

interface EndpointState<T extends Slotted> {
  limit: number;
  inFlight: number;
  ready: ReadyQueue<T>;
  /** Sends started before this moment do not halve the limit again (one decrease per round). */
  decreasedAt: number;
}

/** What the next claim may take: for a ClaimRequest (`endpointRoom`, `endpointLimit`, `limit`). */
export interface ClaimRoom {
  limit: number;
  endpointRoom: Record<string, number>;
  endpointLimit: number;
}

/**
 * Where an endpoint's limit starts (or `endpointConcurrency` if lower).
 * Under a commit flood a send's slot cycle is one turn of the busy event loop (the answer waits
 * for the thread), so one endpoint's deliveries per second are its limit over that turn: 8 slots
 * delivered ~1,000/s beside 4,000 commits/s. The default `endpointConcurrency` is 64;
 * starting lower keeps what a hanging receiver can hold where it was.
 */
export const START_LIMIT = 8;
/** How many a claim may take for endpoints new to this process when the pool is full. */
const RESERVE_CLAIM = 16;
/**
 * Claimed ahead per healthy endpoint, in multiples of its limit (beyond its sends in flight):
 * 64 with the default limit of 8, so one claim serves about 32 sends. Each claim is a writer
 * transaction; with claims by id (hints.ts) its cost is mostly the transaction's, so fewer,
 * larger claims cut the dispatcher's SQL time per delivery by about a third against a window of
 * 16 (bench/probe/drain.ts, docs/benchmarks.md). A claimed delivery that waits too long is left
 * to be claimed again (startBy), and an endpoint in trouble holds no more than it may send.
 */
export const CLAIM_AHEAD = 8;
/** Until an endpoint's pace is known, it holds this many times its limit ahead (as before). */
export const FIRST_AHEAD = 2;
/**
 * At most this long should the last delivery claimed ahead wait for its slot, at the endpoint's
 * recent pace: a slow endpoint (seconds per answer) holds fewer ahead, so none waits so long
 * that it must be left to its lease (startBy), and other dispatchers can take the rest.
 */
const AHEAD_WAIT_MS = 2_000;

/** Slots for claimed deliveries (`T`: what the caller keeps for each, handed back by next()). */
export class Slots<T extends Slotted = ClaimedDelivery> {
  readonly #limits: SlotLimits;
  readonly #endpoints = new Map<string, EndpointState<T>>();
  #inFlight = 0;
  #ready = 0;
  /** Round-robin position: the endpoint that started a send last goes to the back. */
  #order: string[] = [];
  /** Per endpoint, a moving average of its sends' durations (kept while the endpoint is idle). */
  readonly #paceMs = new Map<string, number>();
  /**
   * Per endpoint forgotten while idle, the limit it had earned: where it starts again (one number
   * per endpoint ever seen, as #paceMs). One that then hangs holds at most that limit until its
   * timeouts halve it, as one that starts hanging while busy does.
   */
  readonly #earned = new Map<string, number>();
  readonly #promised = new Map<string, number>();
  #promisedTotal = 0;

  constructor(limits: SlotLimits) {
    this.#limits = limits;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Claimed, not yet started. */
  get ready(): number {
    return this.#ready;
  }

  limitOf(endpointId: string): number {
    return this.#endpoints.get(endpointId)?.limit ?? this.#start;
  }

  /** Claimed for this endpoint, not yet started. */
  readyAt(endpointId: string): number {
    return this.#endpoints.get(endpointId)?.ready.length ?? 0;
  }

  inFlightAt(endpointId: string): number {
    return this.#endpoints.get(endpointId)?.inFlight ?? 0;
  }

  /** An endpoint's first limit. */
  get #start(): number {
    return Math.min(START_LIMIT, this.#limits.endpointConcurrency);
  }

  #state(endpointId: string): EndpointState<T> {
    let state = this.#endpoints.get(endpointId);
    if (!state) {
      state = {
        limit: this.#earned.get(endpointId) ?? this.#start,
        inFlight: 0,
        ready: new ReadyQueue<T>(),
        decreasedAt: 0,
      };
      this.#endpoints.set(endpointId, state);
      this.#order.push(endpointId);
    }
    return state;
  }

  /**
   * How many an endpoint holds ahead at most: up to CLAIM_AHEAD times its limit when it answers
   * fast, fewer when slow (AHEAD_WAIT_MS), only its limit once it is in trouble (halved below
   * where it started).
   */
  #ahead(endpointId: string, state: EndpointState<T>): number {
    if (state.limit < this.#start) return state.limit;
    const pace = this.#paceMs.get(endpointId);
    const factor =
      pace === undefined
        ? FIRST_AHEAD
        : Math.max(1, Math.min(CLAIM_AHEAD, Math.floor(AHEAD_WAIT_MS / Math.max(1, pace))));
    return factor * state.limit;
  }

  /** How many this endpoint may hold claimed ahead now. */
  aheadOf(endpointId: string): number {
    const idle = { limit: this.#start, inFlight: 0, ready: new ReadyQueue<T>(), decreasedAt: 0 };
    return this.#ahead(endpointId, this.#endpoints.get(endpointId) ?? idle);
  }

  /** Whether a claim for this endpoint is due: half of what it holds ahead is used up. */
  wantsMore(endpointId: string): boolean {
    const state = this.#endpoints.get(endpointId);
    return !state || state.ready.length <= this.#ahead(endpointId, state) / 2;
  }

  /**
   * Leases promised to commits under way (own leases: deliveries/enqueue.ts): counted as held at
   * their endpoint until the commit hands them over (`add`, after `settle`) or they are given up.
   */
  promise(endpointId: string, n = 1): void {
    this.#promised.set(endpointId, (this.#promised.get(endpointId) ?? 0) + n);
    this.#promisedTotal += n;
  }

  /** Promised leases that were handed over or given up. */
  settle(endpointId: string, n = 1): void {
    const left = (this.#promised.get(endpointId) ?? 0) - n;
    if (left > 0) this.#promised.set(endpointId, left);
    else this.#promised.delete(endpointId);
    this.#promisedTotal -= n;
  }

  /** How many more one endpoint may hold now (claimed ahead, in flight or promised). */
  roomAt(endpointId: string): number {
    const globalRoom = this.#globalRoom();
    const state = this.#endpoints.get(endpointId);
    const promised = this.#promised.get(endpointId) ?? 0;
    if (!state) return (globalRoom > 0 ? (1 + FIRST_AHEAD) * this.#start : 1) - promised;
    return this.#roomOf(endpointId, state, globalRoom) - promised;
  }

  #globalRoom(): number {
    return (1 + CLAIM_AHEAD) * this.#limits.concurrency - this.#inFlight - this.#ready - this.#promisedTotal;
  }

  #roomOf(id: string, state: EndpointState<T>, globalRoom: number): number {
    const held = state.inFlight + state.ready.length;
    // Pool full: endpoints that live on their reserved send (at most one in flight) still
    // get their sends claimed ahead, so each one starts the moment the previous one answers
    // instead of after a claim of its own; the others wait for room.
    return globalRoom > 0
      ? Math.max(0, state.limit + this.#ahead(id, state) - held)
      : state.inFlight <= 1
        ? Math.max(0, this.#ahead(id, state) - state.ready.length)
        : 0;
  }

  /**
   * What the next claim may take. There is always something: endpoints this process holds
   * nothing for may have due work it cannot see without claiming (at least their reserved send).
   * `awaitingAt`: per endpoint, room kept for claims already on their way (sends whose outcomes
   * are not written yet: the batch that writes them claims the successors it promotes).
   */
  claimRoom(awaitingAt?: (endpointId: string) => number): ClaimRoom {
    const globalRoom = this.#globalRoom();
    const endpointRoom: Record<string, number> = {};
    let wanted = 0;
    for (const [id, state] of this.#endpoints) {
      const kept = (this.#promised.get(id) ?? 0) + (awaitingAt?.(id) ?? 0);
      const room = Math.max(0, this.#roomOf(id, state, globalRoom) - kept);
      endpointRoom[id] = room;
      wanted += room;
    }
    // Endpoints not listed hold nothing here: a full window each, or their reserved send.
    const endpointLimit = globalRoom > 0 ? (1 + FIRST_AHEAD) * this.#start : 1;
    return {
      // No more than the listed endpoints can take (or one unlisted endpoint): the claim scans a
      // few times its limit, and a large scan is what makes a claim expensive.
      limit:
        globalRoom > 0
          ? Math.min(globalRoom, Math.max(wanted, endpointLimit))
          : Math.max(wanted, RESERVE_CLAIM),
      endpointRoom,
      endpointLimit,
    };
  }

  /** Takes claimed deliveries; they wait here until `next()` starts them, at the latest `startBy`. */
  add(claimed: readonly T[], startBy: number): void {
    for (const delivery of claimed) {
      this.#state(delivery.endpointId).ready.push({ delivery, startBy });
      this.#ready += 1;
    }
  }

  /**
   * The next delivery that may start now, fairly across endpoints, or null. The caller must
   * call `finished` once for each one it gets.
   */
  next(now: number, dropped: (delivery: T) => void): T | null {
    const poolFull = this.#inFlight >= this.#limits.concurrency;
    for (let i = 0; i < this.#order.length; i++) {
      const id = this.#order[i] as string;
      const state = this.#endpoints.get(id);
      if (!state) continue;
      // Waited too long behind a slow endpoint: its lease would run out mid-send.
      for (let first = state.ready.first(); first !== undefined && first.startBy <= now; ) {
        state.ready.take();
        dropped(first.delivery);
        this.#ready -= 1;
        first = state.ready.first();
      }
      if (state.ready.length === 0 || state.inFlight >= state.limit) continue;
      if (poolFull && state.inFlight > 0) continue;
      const { delivery } = state.ready.take() as Ready<T>;
      this.#ready -= 1;
      state.inFlight += 1;
      this.#inFlight += 1;
      // To the back of the line: the others go first next time.
      this.#order.splice(i, 1);
      this.#order.push(id);
      return delivery;
    }
    return null;
  }

  /**
   * A send ended (the receiver answered, or not). `trouble`: timed out, could not connect, or
   * asked to slow down. Returns whether it is time to claim more for the endpoint (wantsMore).
   */
  finished(endpointId: string, startedAt: number, trouble: boolean, now: number): boolean {
    const state = this.#endpoints.get(endpointId);
    if (!state) return true;
    state.inFlight -= 1;
    this.#inFlight -= 1;
    const took = Math.max(0, now - startedAt);
    const pace = this.#paceMs.get(endpointId);
    this.#paceMs.set(endpointId, pace === undefined ? took : pace + (took - pace) / 5);
    if (trouble) {
      if (startedAt >= state.decreasedAt) {
        state.limit = Math.max(1, Math.floor(state.limit / 2));
        state.decreasedAt = now;
      }
    } else if (state.limit < this.#limits.endpointConcurrency) {
      state.limit += 1;
    }
    const held = state.inFlight + state.ready.length;
    // Idle and not in trouble: forgotten (it starts again at the limit it earned: #earned).
    if (held === 0 && state.limit >= this.#start) {
      this.#forget(endpointId);
      return true;
    }
    return this.wantsMore(endpointId);
  }

  #forget(endpointId: string): void {
    const state = this.#endpoints.get(endpointId);
    if (state) this.#earned.set(endpointId, state.limit);
    this.#endpoints.delete(endpointId);
    const i = this.#order.indexOf(endpointId);
    if (i >= 0) this.#order.splice(i, 1);
  }
}

/** Whether an attempt's outcome says the endpoint is in trouble (fewer slots for it). */
export function isTrouble(statusCode: number | null): boolean {
  return (
    statusCode === null ||
    statusCode === 429 ||
    statusCode === 502 ||
    statusCode === 503 ||
    statusCode === 504
  );
}
