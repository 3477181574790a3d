// Named writes: every write outboxd makes is an operation made from plain arguments by a
// definition (defineWrite), registered under a name for what it does, and queued on the Writer.
// Plain arguments (structured-clonable data: no functions, no class instances but Map, Set, Error)
// because the engine driver's writer runs on a thread of its own (writer-thread.ts): a write
// crosses as its name and arguments, and the writer thread makes it from the same definition
// (its module, src/writes.ts, imports every module that defines writes).
//
// An operation may use something of the process's memory while it runs: the commit's head leases
// read the dispatcher's endpoints and slots (deliveries/enqueue.ts HeadLeases). That is a loan
// (WriteLoan), lent once (Writes.lend): on the thread that holds it the operation gets the live
// object; across threads the main thread reserves a budget for each message it posts, the writer
// thread builds a stand-in from it (Borrow), what the operations took comes back with their
// answers, and the rest is given back.
import type { Op } from "./op.ts";

/** A write by name with its arguments. `T` is its answer (type only). */
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
  /** How many units of the loan it may take (a commit: one head lease per event and endpoint). */
  borrows: ((args: unknown[]) => number) | null;
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

/** Registers the write named `name` and returns the function that names it with its arguments. */
export function defineWrite<A extends unknown[], T>(
  name: string,
  make: (...args: A) => Op<T>,
  options: DefineOptions,
): (...args: A) => NamedWrite<T> {
  register(name, { make: (args) => make(...(args as A)), again: options.again, borrows: null });
  return (...args) => ({ name, args });
}

/**
 * A write that borrows the loan (`lent`: the live object on its thread, a budget's stand-in on the
 * writer thread, undefined when nothing is lent); `borrows` says how many units it may take.
 */
export function defineBorrowingWrite<A extends unknown[], T>(
  name: string,
  make: (lent: unknown, ...args: A) => Op<T>,
  options: DefineOptions & { borrows: (...args: A) => number },
): (...args: A) => NamedWrite<T> {
  const { borrows } = options;
  register(name, {
    make: (args, lent) => make(lent, ...(args as A)),
    again: options.again,
    borrows: (args) => borrows(...(args as A)),
  });
  return (...args) => ({ name, args });
}

function register(name: string, definition: Definition): void {
  if (definitions.has(name)) throw new Error(`a write named ${name} is defined twice`);
  definitions.set(name, definition);
}

/** The names of every write defined on this thread (a test compares the writer thread's). */
export function definedWrites(): string[] {
  return [...definitions.keys()].sort();
}

function definitionOf(name: string): Definition {
  const definition = definitions.get(name);
  if (!definition)
    throw new Error(`no write named ${name} is defined on this thread (src/writes.ts imports them)`);
  return definition;
}

/** How many units of the loan a write may take. */
export function borrowsOf(request: NamedWrite<unknown>): number {
  return definitionOf(request.name).borrows?.(request.args) ?? 0;
}

/** What Writer.write takes for a named write: the operation, or (re-runnable) its maker. */
export function operationOf<T>(request: NamedWrite<T>, lent: unknown): Op<T> | (() => Op<T>) {
  const { make, again } = definitionOf(request.name);
  return (again ? () => make(request.args, lent) : make(request.args, lent)) as Op<T> | (() => Op<T>);
}

/** Where named writes go: the Writer on this thread, or the writer thread. */
export interface Writes {
  write<T>(request: NamedWrite<T>, options?: WriteOptions): Promise<T>;
  /** Lends the writes that borrow this loan from now on (the dispatcher's head leases). */
  lend(loan: WriteLoan<unknown>): void;
}

/** Something of the main thread's memory that writes may use (see the header). */
export interface WriteLoan<B> {
  /** On the main thread: the object the writes use. */
  readonly live: unknown;
  /** For the writer thread: reserves room for writes that may take up to `units`; null: none. */
  reserve(units: number): B | null;
  /** A write took this (an item its stand-in handed out), before the write's caller hears. */
  took(item: unknown): void;
  /** The writes of this budget are all answered: what they did not take is free again. */
  giveBack(budget: B): void;
}

/** On the writer thread: the stand-in for a loan, built from a budget; `took` is told what a write took. */
export type Borrow = (budget: unknown, took: (item: unknown) => void) => unknown;
