// The one place errors become responses: a Problem renders as application/problem+json; any
// other error is a bug, logged, and answered with a bare 500 that leaks nothing.
import type { Context } from "hono";
import { isStorageFull } from "../db/storage-errors.ts";
import { Problem, problems } from "../lib/problem.ts";
import type { Logger } from "../ops/log.ts";

export function problemResponse(problem: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}

/** The app's error handler; an unexpected error goes to `logger` like every other log line. */
export function errorHandler(logger: Logger): (error: Error, c: Context) => Response {
  return (error, c) => onError(error, c, logger);
}

function onError(error: Error, c: Context, logger: Logger): Response {
  if (error instanceof Problem) return problemResponse(error);
  if (isBusy(error)) {
    // Another process held the write lock past OUTBOXD_BUSY_TIMEOUT: nothing was written, and
    // the client may simply try again.
    return problemResponse(problems.unavailable("the database is busy; nothing was written, retry shortly"), {
      "retry-after": "1",
    });
  }
  if (isStorageFull(error)) {
    // SQLITE_FULL: the disk is full; nothing of this write was stored (/readyz fails until a write
    // succeeds). Fatal storage errors never get here: they stop the process (db/storage-errors.ts).
    return problemResponse(
      new Problem(503, "storage-full", "Storage full", "the database's disk is full; nothing was written"),
    );
  }
  logger.log("error", "unhandled error", {
    method: c.req.method,
    path: c.req.path,
    error: error.stack ?? String(error),
  });
  return problemResponse(
    new Problem(500, "internal", "Internal error", "The server failed unexpectedly; see its log."),
  );
}

export function onNotFound(c: Context): Response {
  return problemResponse(problems.notFound(`no route for ${c.req.method} ${c.req.path}`));
}

/** SQLITE_BUSY (and SQLITE_BUSY_SNAPSHOT…): the write lock was not had within the busy timeout. */
function isBusy(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    (typeof code === "string" && code.startsWith("SQLITE_BUSY")) || /database is locked/i.test(error.message)
  );
}
