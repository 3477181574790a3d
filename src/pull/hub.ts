// In-process wake-ups for pull consumers (DESIGN §12): a long poll or an open stream with nothing
// to take sleeps here, costing no query and holding no lock, until something that may have made
// work claimable for its endpoint happens in this process (a commit, an ack or nack that moved a
// queue, a replay, an enable, the sweep) or its own timer runs out. While a consumer is present
// (`enter`), its endpoint has a version that every wake-up bumps: the consumer notes it before it
// claims, and a wake-up that arrives while it claims is not lost.

type Listener = () => void;

export class PullHub {
  readonly #listeners = new Map<string, Set<Listener>>();
  readonly #versions = new Map<string, number>();

  /** A consumer is present until the returned function is called (a poll, a stream). */
  enter(endpointId: string): () => void {
    return this.subscribe(endpointId, () => {});
  }

  /** The endpoint's wake-up count (kept while a consumer is present): note it before a claim. */
  version(endpointId: string): number {
    return this.#versions.get(endpointId) ?? 0;
  }

  /** Something changed for these endpoints (all endpoints with consumers when none are named). */
  wake(endpointIds?: Iterable<string>): void {
    for (const id of endpointIds ?? [...this.#listeners.keys()]) {
      const listeners = this.#listeners.get(id);
      // Only endpoints someone waits on need a version: a commit to any other costs a lookup.
      if (!listeners) continue;
      this.#versions.set(id, this.version(id) + 1);
      for (const listener of [...listeners]) listener();
    }
  }

  /** The endpoints that have a consumer waiting now (the sweep looks for work for these only). */
  waiting(): string[] {
    return [...this.#listeners.keys()];
  }

  /** Calls `listener` on every wake-up of the endpoint until the returned function is called. */
  subscribe(endpointId: string, listener: Listener): () => void {
    let set = this.#listeners.get(endpointId);
    if (!set) {
      set = new Set();
      this.#listeners.set(endpointId, set);
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(endpointId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) {
        this.#listeners.delete(endpointId);
        this.#versions.delete(endpointId);
      }
    };
  }

  /**
   * Resolves when the endpoint is woken after `version` (at once if it already was), at `until`
   * (ms, the clock of `now`), or when `signal` aborts; never rejects.
   */
  wait(endpointId: string, version: number, until: number, now: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (this.version(endpointId) !== version || until <= now || signal?.aborted) {
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const unsubscribe = this.subscribe(endpointId, done);
      const timer = setTimeout(done, until - now);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
