// Named writes: every write outboxd makes is an operation made by name from plain arguments, its
// definition registered here under its name, and queued on the Writer (writer-local.ts).
//
// An operation may use something of the process's memory while it runs: the commit's head leases
// read the dispatcher's endpoints and slots (deliveries/enqueue.ts HeadLeases). That is a loan:
// lent once (Writes.lend), handed to the operations that borrow it as they are made.
import type { Op } from "./op.ts";

/** A write by name. `T` is its answer (type only). */
export interface NamedWrite<T> {
  readonly name: string;
  readonly args: unknown[];
  /** Never set: carries the answer's type from the definition to `write`. */
  readonly answer?: T;
}

interface Definition {
  make(args: unknown[], lent: unknown): Op<unknown>;
  /** Whether the Writer may make it anew (a function to Writer.write: group commit's one savepoint, remote-writer.ts). */
  again: boolean;
}

const definitions = new Map<string, Definition>();

export interface WriteOptions {
  /** See Writer.write: false for bookkeeping whose loss on power failure is harmless. */
  durable?: boolean;
}

export interface DefineOptions {
  /** The operation may be made anew and run again (see Writer.write). */
  again: boolean;
}

/** Registers a write under `name` and returns the function that names it with its arguments. */
export function defineWrite<A extends unknown[], T>(
  name: string,
  make: (...args: A) => Op<T>,
  options: DefineOptions,
): (...args: A) => NamedWrite<T> {
  register(name, { make: (args) => make(...(args as A)), again: options.again });
  return (...args) => ({ name, args });
}

/** A write that borrows the loan (`lent`: the object lent, undefined when nothing is lent). */
export function defineBorrowingWrite<A extends unknown[], T>(
  name: string,
  make: (lent: unknown, ...args: A) => Op<T>,
  options: DefineOptions,
): (...args: A) => NamedWrite<T> {
  register(name, { make: (args, lent) => make(lent, ...(args as A)), again: options.again });
  return (...args) => ({ name, args });
}

function register(name: string, definition: Definition): void {
  if (definitions.has(name)) throw new Error(`a write named ${name} is defined twice`);
  definitions.set(name, definition);
}

function definitionOf(name: string): Definition {
  const definition = definitions.get(name);
  if (!definition) throw new Error(`no write named ${name} is defined`);
  return definition;
}

/** What Writer.write takes for a named write: the operation, or (re-runnable) its maker. */
export function operationOf(request: NamedWrite<unknown>, lent: unknown): Op<unknown> | (() => Op<unknown>) {
  const { make, again } = definitionOf(request.name);
  return again ? () => make(request.args, lent) : make(request.args, lent);
}

/** Where named writes go: the Writer. */
export interface Writes {
  write<T>(request: NamedWrite<T>, options?: WriteOptions): Promise<T>;
  /** Resolves once everything written so far has been committed or failed. */
  idle(): Promise<void>;
  /** Lends the writes that borrow this object from now on (the dispatcher's head leases). */
  lend(loan: unknown): void;
}
