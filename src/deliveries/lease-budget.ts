// Own leases (enqueue.ts) for a commit that runs on the writer thread (db/writer-ops.ts WriteLoan):
// the dispatcher cannot be asked mid-transaction there, so before the main thread posts a message
// of writes it reserves room at each endpoint it could take a new head for (a budget: its slots
// count the room as promised), the commits of that message spend it through this stand-in, each
// head leased goes back with its commit's answer (the dispatcher then holds it as if the commit
// had run beside it), and the room left is given back once the message's writes are all answered.
import type { HeadLeases, LeasedHead } from "./enqueue.ts";

/** Room reserved for the commits of one message, under one lease token. */
export interface LeaseBudget {
  owner: string;
  leaseMs: number;
  /** Per endpoint: its version as the dispatcher knows it and the leases it may still take. */
  endpoints: { id: string; version: number; room: number }[];
}

/** The budget as HeadLeases: offers while room is left, spends it on each head leased and reports it to `took`. */
export function budgetLeases(budget: LeaseBudget, took: (head: LeasedHead) => void): HeadLeases {
  const find = (endpointId: string) => budget.endpoints.find((e) => e.id === endpointId);
  return {
    offer(endpointId) {
      const endpoint = find(endpointId);
      if (!endpoint || endpoint.room <= 0) return null;
      return { owner: budget.owner, leaseMs: budget.leaseMs, endpointVersion: endpoint.version };
    },
    leased(head) {
      const endpoint = find(head.endpointId);
      if (endpoint) endpoint.room -= 1;
      took(head);
    },
  };
}
