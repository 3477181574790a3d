// The ledger's chain across one group commit (DESIGN §13): the head is read once per write
// transaction, at the group's first chain step, and each operation's entry is built on the one
// before it in memory. Inside BEGIN IMMEDIATE nobody else can append, so the head read there is
// the head, also with several processes on one database file. An operation rolled back to its
// savepoint takes its entry with it: the head goes back to what it was before that operation
// (a group rolled back whole runs again on a new GroupChain).
import type { ChainStep, Link, Op } from "./op.ts";

export interface ChainMark {
  known: boolean;
  head: Link | undefined;
}

export class GroupChain {
  /** Whether the head has been read in this transaction. */
  #known = false;
  #head: Link | undefined;

  /** Where the chain stands, to return to if the operation about to run is rolled back. */
  mark(): ChainMark {
    return { known: this.#known, head: this.#head };
  }

  restore(mark: ChainMark): void {
    this.#known = mark.known;
    this.#head = mark.head;
  }

  /** The statements of one chain step: the head (first time only), then the entry's row. */
  *append(step: ChainStep): Op<void> {
    if (!this.#known) {
      this.#head = (yield step.head) as Link | undefined;
      this.#known = true;
    }
    const { link, statement } = step.append(this.#head);
    yield statement;
    this.#head = link;
  }
}
