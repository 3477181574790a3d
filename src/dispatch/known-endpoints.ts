// What the dispatcher knows of endpoints between reads. Every read of a send context
// teaches it each endpoint's kind and, for enabled webhook endpoints, the row as read with its
// version (updated_at, which every change of url, secrets or state bumps). Two uses:
//   - deliveries to pull endpoints are not the dispatcher's: it keeps no hint of them (kinds
//     never change);
//   - a commit's INSERT may lease a new head to the dispatcher only while the endpoint's version is
//     still the one known here (enqueue.ts checks it in the same transaction), so the send may use
//     the endpoint as known here without reading it again.
import type { EndpointToSend } from "./send-context.ts";

export class KnownEndpoints {
  /** Enabled webhook endpoints, as last read. */
  readonly #webhooks = new Map<string, EndpointToSend>();
  readonly #pull = new Set<string>();

  learn(endpoints: Iterable<EndpointToSend>): void {
    for (const endpoint of endpoints) {
      if (endpoint.kind === "pull") this.#pull.add(endpoint.id);
      else if (endpoint.disabled === 0) this.#webhooks.set(endpoint.id, endpoint);
      else this.#webhooks.delete(endpoint.id);
    }
  }

  /** An enabled webhook endpoint as last read, or undefined (not known, disabled, deleted since). */
  webhook(endpointId: string): EndpointToSend | undefined {
    return this.#webhooks.get(endpointId);
  }

  /** The enabled webhook endpoints, as last read. */
  webhooks(): Iterable<EndpointToSend> {
    return this.#webhooks.values();
  }

  isPull(endpointId: string): boolean {
    return this.#pull.has(endpointId);
  }

  /** Whether this endpoint's kind is known (read at least once). */
  knows(endpointId: string): boolean {
    return this.#pull.has(endpointId) || this.#webhooks.has(endpointId);
  }
}
