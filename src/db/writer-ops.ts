// Named writes: every write outboxd makes is an operation made from its arguments by a
// definition (defineWrite), with a name for what it does, and queued on the Writer (open.ts).
//
// An operation may use something of the process's memory while it runs: the commit's head leases
// read the dispatcher's endpoints and slots (deliveries/enqueue.ts HeadLeases). That is a loan:
// lent once (Writes.lend), handed to the operations that borrow it as they are made.
import type { Op } from "./op.ts";

/** A write made from its arguments: `T` is its answer. */
export interface NamedWrite<T> {
  readonly name: string;
  /** Whether the Writer may make it anew (a function to Writer.write: group commit's one savepoint, remote-writer.ts). */
  readonly again: boolean;
  /** Makes the operation (`lent`: the object lent, undefined when nothing is lent). */
  make(lent: unknown): Op<T>;
}

export interface WriteOptions {
  /** See Writer.write: false for bookkeeping whose loss on power failure is harmless. */
  durable?: boolean;
}

export interface DefineOptions {
  /** The operation may be made anew and run again (see Writer.write). */
  again: boolean;
}

/** The function that makes the write named `name` from its arguments. */
export function defineWrite<A extends unknown[], T>(
  name: string,
  make: (...args: A) => Op<T>,
  options: DefineOptions,
): (...args: A) => NamedWrite<T> {
  const { again } = options;
  return (...args) => ({ name, again, make: () => make(...args) });
}

/** A write that borrows the loan (`lent`: the object lent, undefined when nothing is lent). */
export function defineBorrowingWrite<A extends unknown[], T>(
  name: string,
  make: (lent: unknown, ...args: A) => Op<T>,
  options: DefineOptions,
): (...args: A) => NamedWrite<T> {
  const { again } = options;
  return (...args) => ({ name, again, make: (lent) => make(lent, ...args) });
}

/** What Writer.write takes for a named write: the operation, or (re-runnable) its maker. */
export function operationOf<T>(request: NamedWrite<T>, lent: unknown): Op<T> | (() => Op<T>) {
  return request.again ? () => request.make(lent) : request.make(lent);
}

/** Where named writes go: the Writer. */
export interface Writes {
  write<T>(request: NamedWrite<T>, options?: WriteOptions): Promise<T>;
  /** Lends the writes that borrow this object from now on (the dispatcher's head leases). */
  lend(loan: unknown): void;
}
