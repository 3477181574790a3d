// The WAL's checkpoints on a thread of their own (checkpointer.ts starts this Worker): its own
// connection copies the WAL's frames into the database file once enough have gathered, so the
// copy and its two fsyncs no longer run inside a COMMIT on the event loop (a 30-65 ms stall
// every ~10,000 frames before). PASSIVE: it never waits for, nor blocks, the writer or readers.
import { closeSync, openSync, readSync } from "node:fs";
import type { CheckpointerMessage, CheckpointerStart } from "./checkpointer.ts";
import type { SqliteConnection } from "./sqlite.ts";
import { openSqlite } from "./sqlite-open.ts";
import { sqliteCode } from "./storage-errors.ts";

declare const self: {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: CheckpointerMessage): void;
};

/**
 * The wal-index header (https://www.sqlite.org/walformat.html): mxFrame, the WAL's last valid
 * frame, at byte 16 and nBackfill, the frames already copied, at byte 96, native byte order. Read
 * without a lock: a torn read only makes one poll early or late.
 */
const HEADER_BYTES = 100;
const header = Buffer.alloc(HEADER_BYTES);

/** Checkpoints in a row at most, to catch up with the frames the writer added meanwhile. */
const CATCH_UP = 8;

let db: SqliteConnection | null = null;
let shm: number | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

/** The WAL's last frame and how many frames are copied, or null when the index cannot be read. */
function walIndex(): { last: number; copied: number } | null {
  if (shm === null || readSync(shm, header, 0, HEADER_BYTES, 0) < HEADER_BYTES) return null;
  return LITTLE_ENDIAN
    ? { last: header.readUInt32LE(16), copied: header.readUInt32LE(96) }
    : { last: header.readUInt32BE(16), copied: header.readUInt32BE(96) };
}

/** Whether this thread's descriptors are the process's, for the Checkpointer to close (Bun's are). */
const HANDED_BACK = typeof Bun !== "undefined";

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** An error as the main thread hears it: its text and SQLite code (a fatal one stops the process there). */
function failure(error: unknown): { error: string; code: string | undefined } {
  return { error: String(error), code: sqliteCode(error) };
}

function start(options: CheckpointerStart): void {
  // The same copy of SQLite as the writer's connection (the runtime's own: sqlite.ts).
  const connection = openSqlite(options.path, { busyTimeoutMs: options.busyTimeoutMs });
  db = connection;
  // A checkpoint syncs the WAL before copying and the database file after, unless synchronous is OFF.
  connection.exec(`PRAGMA synchronous = ${options.synchronous}`);
  const checkpoint = connection.prepare("PRAGMA wal_checkpoint(PASSIVE)");
  // The writer opened the database in WAL mode before starting this worker: the file exists. Never
  // closed here: handed back when stopped or failed (CheckpointerMessage in checkpointer.ts says why).
  shm = openSync(`${options.path}-shm`, "r");
  let checkpoints = 0;
  // The WAL starts over only when a write transaction begins with every frame copied. Frames the
  // writer adds during a checkpoint leave it short of that, so after a checkpoint every poll copies
  // what is left (a few groups' frames) until the WAL has started over (its last frame went down).
  let behind = false;
  let lastFrame = 0;
  timer = setInterval(() => {
    try {
      const index = walIndex();
      if (!index) return;
      if (index.last < lastFrame) behind = false;
      lastFrame = index.last;
      const waiting = index.last - index.copied;
      if (waiting < options.frames && !(behind && waiting > 0)) return;
      for (let i = 0; i < CATCH_UP; i++) {
        const { busy } = checkpoint.get() as { busy: number; log: number; checkpointed: number };
        checkpoints += 1;
        const now = walIndex();
        if (busy !== 0 || !now || now.last === now.copied) break;
      }
      behind = true;
      self.postMessage({ kind: "checkpointed", checkpoints });
    } catch (error) {
      self.postMessage({ kind: "failed", ...failure(error), shmFd: HANDED_BACK ? shm : null });
    }
  }, options.intervalMs);
  self.postMessage({ kind: "ready" });
}

function stop(): void {
  if (timer) clearInterval(timer);
  timer = null;
  let shmFd = shm;
  shm = null;
  db?.close();
  db = null;
  // Deno's node:fs numbers files per thread (resource ids, not the process's descriptors): there
  // it can only be closed here, as before (the lock hazard of checkpointer.ts remains on Deno).
  if (shmFd !== null && !HANDED_BACK) {
    closeSync(shmFd);
    shmFd = null;
  }
  self.postMessage({ kind: "stopped", shmFd });
}

self.onmessage = (event: MessageEvent) => {
  const message = event.data as { kind: "start"; options: CheckpointerStart } | { kind: "stop" };
  try {
    if (message.kind === "start") start(message.options);
    else stop();
  } catch (error) {
    self.postMessage({ kind: "failed", ...failure(error), shmFd: HANDED_BACK ? shm : null });
  }
};
