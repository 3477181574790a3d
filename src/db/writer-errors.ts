// Errors of named writes across the thread boundary (writer-thread.ts). A structured clone keeps
// an Error's message but not its class nor its own fields, so a Problem (status, slug, pointers:
// the 409/412/422 an operation throws) would reach the HTTP layer as a 500. Problems cross as
// their fields and are made again; any other error as its name, message, stack, code and errno
// (e.g. SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE, SQLITE_FULL: storage-errors.ts reads both).
import { Problem } from "../lib/problem.ts";

export type WireError =
  | {
      problem: {
        status: number;
        slug: string;
        title: string;
        detail: string;
        extra: Record<string, unknown>;
      };
    }
  | { name: string; message: string; stack: string | undefined; code: unknown; errno: unknown };

export function encodeError(error: unknown): WireError {
  if (error instanceof Problem) {
    const { status, slug, title, detail, extra } = error;
    return { problem: { status, slug, title, detail, extra } };
  }
  if (error instanceof Error) {
    return {
      name: error.name,
      message: error.message,
      stack: error.stack,
      code: (error as { code?: unknown }).code,
      errno: (error as { errno?: unknown }).errno,
    };
  }
  return { name: "Error", message: String(error), stack: undefined, code: undefined, errno: undefined };
}

export function decodeError(wire: WireError): Error {
  if ("problem" in wire) {
    const { status, slug, title, detail, extra } = wire.problem;
    return new Problem(status, slug, title, detail, extra);
  }
  const error = new Error(wire.message);
  error.name = wire.name;
  if (wire.stack !== undefined) error.stack = wire.stack;
  if (wire.code !== undefined) (error as { code?: unknown }).code = wire.code;
  if (wire.errno !== undefined) (error as { errno?: unknown }).errno = wire.errno;
  return error;
}
