// Turns deferred fan-outs (src/deliveries/enqueue.ts) into deliveries, one small transaction
// at a time through the Writer, so commits queued meanwhile are written between two chunks.
// Started with the process (a fan-out left by a crash, or by a process that is gone, is
// expanded here), kicked by every commit that deferred one, and checked once a second for those
// of other processes on the same database.
import type { Database } from "../db/open.ts";
import { EXPAND_CHUNK, fanOutsPending } from "../deliveries/enqueue.ts";
import { expandFanOutsWrite } from "../deliveries/writes.ts";
import { failpoint } from "../failpoints.ts";
import type { Clock } from "../lib/time.ts";

export interface FanOutExpanderDeps {
  db: Database;
  clock: Clock;
  /** After a chunk became deliveries (wakes the dispatcher for their endpoints). */
  onDeliveries?: (count: number, endpointIds: Set<string>) => void;
  onError?: (error: unknown) => void;
  /** How often to look for fan-outs committed by other processes (ms). */
  checkEveryMs?: number;
}

export class FanOutExpander {
  readonly #deps: FanOutExpanderDeps;
  #running: Promise<void> | null = null;
  #again = false;
  #timer: ReturnType<typeof setInterval> | null = null;
  #stopped = false;

  constructor(deps: FanOutExpanderDeps) {
    this.#deps = deps;
  }

  /** Expands whatever is left from before, then keeps checking. */
  start(): void {
    this.kick();
    this.#timer = setInterval(() => void this.#check(), this.#deps.checkEveryMs ?? 1000);
    this.#timer.unref?.();
  }

  /** Expands now (a commit deferred a fan-out). Coalesces calls while a run is under way. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#run().finally(() => {
      this.#running = null;
    });
  }

  /** Resolves once nothing is being expanded. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Stops after the chunk under way (what is left stays for the next start). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.idle();
  }

  async #run(): Promise<void> {
    const { db, clock } = this.#deps;
    try {
      do {
        this.#again = false;
        for (;;) {
          if (this.#stopped) return;
          // Durable: its deliveries may be sent as soon as any connection sees them (DESIGN §1.8).
          const expanded = await db.write(expandFanOutsWrite(EXPAND_CHUNK, clock()));
          if (expanded.deliveries > 0) this.#deps.onDeliveries?.(expanded.deliveries, expanded.endpointIds);
          if (!expanded.more) break;
        }
      } while (this.#again);
    } catch (error) {
      // The rows stay; the next check or kick tries again.
      this.#deps.onError?.(error);
    }
  }

  async #check(): Promise<void> {
    if (this.#running || this.#stopped) return;
    try {
      if (await this.#deps.db.driver.read(fanOutsPending())) {
        failpoint("fan_out.before_expand");
        this.kick();
      }
    } catch (error) {
      this.#deps.onError?.(error);
    }
  }
}
