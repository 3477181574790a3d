// Attempt logs (DESIGN §6 logs): each failed attempt is one `warn` line, each
// successful one a `debug` line, and once a minute one `info` line per endpoint sums up what
// happened: delivered, failed, and p50/p99 of the attempts' duration and of the latency from
// commit (or deliverAfter, or replay) to the 2xx. At thousands of deliveries a second a line
// per success would cost more than the delivery's own bookkeeping.
import type { Level, Logger } from "../ops/log.ts";

export interface LoggedAttempt {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  attempt: number;
  outcome: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  recorded: boolean;
  latencyMs: number | null;
}

const SUMMARY_EVERY_MS = 60_000;

/** Milliseconds rounded down to two significant digits: bins that stay few at any scale. */
function bin(ms: number): number {
  const value = Math.max(0, Math.floor(ms));
  if (value < 100) return value;
  const step = 10 ** (Math.floor(Math.log10(value)) - 1);
  return Math.floor(value / step) * step;
}

class Bins {
  readonly #counts = new Map<number, number>();
  #n = 0;
  add(ms: number): void {
    const b = bin(ms);
    this.#counts.set(b, (this.#counts.get(b) ?? 0) + 1);
    this.#n += 1;
  }
  /** The bin (lower bound, ms) holding the p-th percentile, or null when empty. */
  percentile(p: number): number | null {
    if (this.#n === 0) return null;
    const rank = Math.ceil((p / 100) * this.#n);
    let seen = 0;
    for (const b of [...this.#counts.keys()].sort((x, y) => x - y)) {
      seen += this.#counts.get(b) as number;
      if (seen >= rank) return b;
    }
    return null;
  }
}

interface EndpointMinute {
  delivered: number;
  failed: number;
  duration: Bins;
  latency: Bins;
}

export class AttemptLog {
  readonly #logger: Logger;
  #minute = new Map<string, EndpointMinute>();
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.flush(), SUMMARY_EVERY_MS);
    this.#timer.unref?.();
  }

  /** Stops the timer and writes what the current minute has so far. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.flush();
  }

  record(attempt: LoggedAttempt): void {
    const ok = attempt.outcome === "delivered";
    // One line per attempt (ids, status, duration; never the payload or a secret).
    const level: Level = ok ? "debug" : "warn";
    if (this.#logger.enabled(level)) this.#logger.log(level, "delivery attempt", { ...attempt });
    let minute = this.#minute.get(attempt.endpointId);
    if (!minute) {
      minute = { delivered: 0, failed: 0, duration: new Bins(), latency: new Bins() };
      this.#minute.set(attempt.endpointId, minute);
    }
    minute.duration.add(attempt.durationMs);
    if (ok) {
      minute.delivered += 1;
      if (attempt.latencyMs !== null) minute.latency.add(attempt.latencyMs);
    } else minute.failed += 1;
  }

  /** One `info` line per endpoint that had attempts since the last summary. */
  flush(): void {
    const minute = this.#minute;
    this.#minute = new Map();
    for (const [endpointId, m] of minute) {
      this.#logger.log("info", "delivery summary", {
        endpointId,
        delivered: m.delivered,
        failed: m.failed,
        durationP50Ms: m.duration.percentile(50),
        durationP99Ms: m.duration.percentile(99),
        latencyP50Ms: m.latency.percentile(50),
        latencyP99Ms: m.latency.percentile(99),
      });
    }
  }
}
