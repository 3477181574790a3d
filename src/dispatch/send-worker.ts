// The webhook exchanges on the second core (issue 12). One thread used to do HTTP, the commit
// statements, claims, completions and every `fetch` with its answer; here the dispatcher's thread
// still checks the target, builds and signs the body and decides when a send starts (slots.ts),
// but the request and the reading of its answer run on a Bun Worker. Exchanges go over in
// batches and their results come back in batches, so a delivery costs the dispatcher's thread
// a share of one message instead of a `fetch`. Each batch travels as one JSON string: a
// structured clone of the same objects cost the dispatcher's thread 7-20 us per exchange (13% of
// its time draining a backlog), the JSON text 2-5 us with its stringify (issue 12, session 6).
//
// The worker runs send-worker-main.ts, which makes each exchange with exchange.ts makeExchange: the
// same code as this thread's. It never opens the database. Should it fail, the exchanges it held
// are answered as failed attempts (retried with backoff: at least once allows a redelivery) and
// later ones run in this thread.
import type { Logger } from "../ops/log.ts";
import { type Exchange, type ExchangeResult, makeExchange, workerClient } from "./exchange.ts";

/**
 * The worker's entry point, resolved as the compiled executable resolves it too (scripts/build.ts
 * names it as a second entry point of the build).
 */
const ENTRY = new URL("./send-worker-main.ts", import.meta.url);

interface Waiting {
  resolve: (result: ExchangeResult) => void;
}

/** Whether this runtime can run the send worker (Bun; elsewhere exchanges stay in this thread). */
export function sendWorkerSupported(): boolean {
  return typeof Worker === "function" && typeof (globalThis as { Bun?: unknown }).Bun === "object";
}

export class SendWorker {
  readonly #logger: Logger;
  #worker: Worker | null = null;
  #failed = false;
  #next = 0;
  readonly #waiting = new Map<number, Waiting>();
  /** Exchanges not posted yet: [n, exchange, n, exchange, …], posted once per microtask. */
  #outbox: unknown[] = [];

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Exchanges waiting for their answer on the worker. */
  get pending(): number {
    return this.#waiting.size;
  }

  /** An Exchanger (exchange.ts): on the worker while it works, in this thread otherwise. */
  readonly exchange = (exchange: Exchange): Promise<ExchangeResult> => {
    const worker = this.#failed ? null : this.#start();
    if (!worker) return makeExchange(exchange);
    const n = this.#next++;
    return new Promise<ExchangeResult>((resolve) => {
      this.#waiting.set(n, { resolve });
      this.#outbox.push(n, exchange);
      if (this.#outbox.length === 2) queueMicrotask(() => this.#post());
    });
  };

  /** Stops the worker (after the dispatcher's sends have ended); the next exchange starts another. */
  stop(): void {
    const worker = this.#worker;
    this.#worker = null;
    worker?.terminate();
    this.#fail("the send worker was stopped");
  }

  #start(): Worker | null {
    if (this.#worker) return this.#worker;
    try {
      // smol: a smaller heap; it holds only the requests in flight.
      const worker = new Worker(ENTRY, { smol: true } as WorkerOptions);
      // It must not keep the process alive on its own.
      (worker as { unref?: () => void }).unref?.();
      worker.onmessage = (event: MessageEvent) => this.#answered(event.data as string);
      worker.onerror = (event: ErrorEvent) => this.#broken(worker, event.message);
      worker.addEventListener("messageerror", () => this.#broken(worker, "a message could not be read"));
      // Its first message: the settings its exchanges follow (from this thread's, the config).
      worker.postMessage(JSON.stringify({ webhookClient: workerClient() }));
      this.#worker = worker;
      return worker;
    } catch (error) {
      this.#failed = true;
      this.#logger.log("warn", "webhooks are sent from the dispatcher's thread: no send worker", {
        error: String(error),
      });
      return null;
    }
  }

  #post(): void {
    const jobs = this.#outbox;
    this.#outbox = [];
    if (jobs.length === 0) return;
    if (!this.#worker) {
      // Stopped or broken meanwhile: these never reached it.
      for (let i = 0; i < jobs.length; i += 2) {
        const n = jobs[i] as number;
        const waiting = this.#waiting.get(n);
        this.#waiting.delete(n);
        waiting?.resolve(failed("the send worker is not running"));
      }
      return;
    }
    this.#worker.postMessage(JSON.stringify(jobs));
  }

  #answered(message: string): void {
    const results = JSON.parse(message) as unknown[];
    for (let i = 0; i < results.length; i += 2) {
      const n = results[i] as number;
      const waiting = this.#waiting.get(n);
      this.#waiting.delete(n);
      waiting?.resolve(results[i + 1] as ExchangeResult);
    }
  }

  #broken(worker: Worker, reason: string): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    this.#failed = true;
    worker.terminate();
    this.#logger.log("error", "the send worker failed; webhooks are sent from the dispatcher's thread", {
      error: reason,
    });
    this.#fail(`the send worker failed: ${reason}`);
  }

  /** Answers every exchange still waiting: as failed attempts, retried later (at least once). */
  #fail(message: string): void {
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const w of waiting) w.resolve(failed(message));
  }
}

function failed(message: string): ExchangeResult {
  return { statusCode: null, responsePrefix: null, retryAfter: null, failure: { message } };
}
