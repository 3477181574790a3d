// Named writes: each is made from its definition here and queued on the Writer, with the object
// lent (writer-ops.ts).
import type { Writer } from "./writer.ts";
import { type NamedWrite, operationOf, type WriteOptions, type Writes } from "./writer-ops.ts";

export class LocalWrites implements Writes {
  readonly #writer: Writer;
  #loan: unknown;

  constructor(writer: Writer) {
    this.#writer = writer;
  }

  write<T>(request: NamedWrite<T>, options?: WriteOptions): Promise<T> {
    return this.#writer.write(operationOf(request, this.#loan), options) as Promise<T>;
  }

  idle(): Promise<void> {
    return this.#writer.idle();
  }

  lend(loan: unknown): void {
    this.#loan = loan;
  }
}
