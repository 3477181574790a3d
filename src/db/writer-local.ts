// Named writes on this thread (OUTBOXD_WRITER_THREAD=main, and every client-driver database):
// each is made from its definition here and queued on the Writer, with the loan's live object.
import type { Writer } from "./writer.ts";
import {
  type NamedWrite,
  operationOf,
  type WriteLoan,
  type WriteOptions,
  type Writes,
} from "./writer-ops.ts";

export class LocalWrites implements Writes {
  readonly #writer: Writer;
  #loan: WriteLoan<unknown> | null = null;

  constructor(writer: Writer) {
    this.#writer = writer;
  }

  write<T>(request: NamedWrite<T>, options?: WriteOptions): Promise<T> {
    return this.#writer.write(operationOf(request, this.#loan?.live), options) as Promise<T>;
  }

  idle(): Promise<void> {
    return this.#writer.idle();
  }

  lend(loan: WriteLoan<unknown>): void {
    this.#loan = loan;
  }
}
