// The OTLP/HTTP JSON export of outboxd's spans (DESIGN §14), behind ./tracing-sdk.ts and loaded
// only when tracing is on. Each finished span arrives as its OTLP JSON text and is written at
// once into a pooled byte buffer that is already the body of an export request (the resource
// and scope around a `spans` array), so a span leaves no object behind on the heap: nothing to
// keep alive until the export, to trace through garbage collections, or to turn into an
// OTLP object tree and a JSON string later (the SDK's BatchSpanProcessor, transformer and
// node:http transport cost most of what tracing cost a loaded server; docs/benchmarks.md).
//
// What the standard variables say, as the SDK's batch processor and OTLP/HTTP exporter read
// them: OTEL_BSP_MAX_QUEUE_SIZE (2048 spans waiting at most; beyond, new spans are dropped and
// counted), OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512 a request), OTEL_BSP_SCHEDULE_DELAY (5000 ms at
// most before a partial batch goes), OTEL_BSP_EXPORT_TIMEOUT (30000 ms for the last exports at
// shutdown), OTEL_EXPORTER_OTLP_[TRACES_]HEADERS, _TIMEOUT (10000 ms a request, retries
// included), _COMPRESSION (gzip or none), _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY.
// A request answered 429, 502, 503 or 504, or failing on the network, is retried with
// backoff (honouring Retry-After) inside its timeout; one request is in flight at a time, sent
// from a worker (./tracing-send.ts) so that the thread serving commits only hands it a buffer.

import { readFileSync } from "node:fs";
import { batchSender } from "./tracing-send.ts";

type Warn = (message: string, fields: Record<string, unknown>) => void;
type Env = Record<string, string | undefined>;

export interface ExportSettings {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  gzip: boolean;
  maxQueueSize: number;
  maxBatchSize: number;
  scheduleDelayMs: number;
  shutdownTimeoutMs: number;
  /** Client TLS material (PEM) for the collector, from the certificate variables. */
  tls: { ca?: string; cert?: string; key?: string } | null;
}

/** The export settings from the standard variables; a bad value is warned about and the default kept. */
export function exportSettings(url: string, env: Env, warn: Warn): ExportSettings {
  const signal = (name: string) =>
    env[`OTEL_EXPORTER_OTLP_TRACES_${name}`] ?? env[`OTEL_EXPORTER_OTLP_${name}`];
  const number = (name: string, value: string | undefined, fallback: number, min: number) => {
    if (value === undefined || value.trim() === "") return fallback;
    const parsed = Number(value);
    if (Number.isFinite(parsed) && parsed >= min) return Math.floor(parsed);
    warn(`tracing: ${name} must be a number ≥ ${min}; using ${fallback}`, { value });
    return fallback;
  };
  const headers: Record<string, string> = {};
  for (const list of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    for (const pair of (list ?? "").split(",")) {
      const at = pair.indexOf("=");
      if (at <= 0) continue;
      try {
        headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
      } catch {
        warn("tracing: OTEL_EXPORTER_OTLP_HEADERS has a malformed percent-encoding; header skipped", {
          header: pair.slice(0, at).trim(),
        });
      }
    }
  }
  const compression = signal("COMPRESSION")?.trim().toLowerCase();
  if (compression !== undefined && compression !== "gzip" && compression !== "none" && compression !== "") {
    warn("tracing: OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none; using none", { value: compression });
  }
  const file = (name: string) => {
    const path = signal(name);
    if (!path) return undefined;
    try {
      return readFileSync(path, "utf8");
    } catch (error) {
      warn(`tracing: OTEL_EXPORTER_OTLP_${name} cannot be read; ignored`, { path, error: String(error) });
      return undefined;
    }
  };
  const ca = file("CERTIFICATE");
  const cert = file("CLIENT_CERTIFICATE");
  const key = file("CLIENT_KEY");
  const maxQueueSize = number("OTEL_BSP_MAX_QUEUE_SIZE", env.OTEL_BSP_MAX_QUEUE_SIZE, 2048, 1);
  let maxBatchSize = number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512, 1);
  if (maxBatchSize > maxQueueSize) maxBatchSize = maxQueueSize; // as the SDK does
  return {
    url,
    headers,
    timeoutMs: number("OTEL_EXPORTER_OTLP_TIMEOUT", signal("TIMEOUT"), 10_000, 1),
    gzip: compression === "gzip",
    maxQueueSize,
    maxBatchSize,
    scheduleDelayMs: number("OTEL_BSP_SCHEDULE_DELAY", env.OTEL_BSP_SCHEDULE_DELAY, 5000, 0),
    shutdownTimeoutMs: number("OTEL_BSP_EXPORT_TIMEOUT", env.OTEL_BSP_EXPORT_TIMEOUT, 30_000, 1),
    tls: ca || cert || key ? { ca, cert, key } : null,
  };
}

export interface SpanExporter {
  /**
   * The writer of one finished span's OTLP JSON object, positioned in the next export request;
   * null when the queue is full (the span is dropped and counted). Write the span, then end().
   */
  span(): SpanWriter | null;
  /** Exports everything queued so far and stops; later spans are dropped. Safe twice. */
  shutdown(): Promise<void>;
}

/** The buffer size spans are written into: a batch of 512 typical spans (~700 bytes) fits. */
const BATCH_BYTES = 512 * 1024;
const COMMA = 44;
/** Warnings about drops and failed exports: at most one per this many ms (collector down). */
const WARN_EVERY_MS = 10_000;

/** One export request being filled: the request body so far, and how many spans it holds. */
interface Batch {
  bytes: Uint8Array;
  used: number;
  spans: number;
}

/**
 * The span queue and its OTLP/HTTP JSON export. `resourceJson` and `scopeJson` are the OTLP
 * JSON of the resource and the instrumentation scope, the same for every span.
 */
export function otlpJsonExporter(
  settings: ExportSettings,
  resourceJson: string,
  scopeJson: string,
  userAgent: string,
  warn: Warn,
): SpanExporter {
  const prefix = UTF8.encode(
    `{"resourceSpans":[{"resource":${resourceJson},"scopeSpans":[{"scope":${scopeJson},"spans":[`,
  );
  const suffix = UTF8.encode("]}]}]}");
  const sender = batchSender(
    {
      url: settings.url,
      headers: { ...settings.headers, "content-type": "application/json", "user-agent": userAgent },
      timeoutMs: settings.timeoutMs,
      gzip: settings.gzip,
      tls: settings.tls,
    },
    (reason) => warn("tracing: exports are sent from the main thread", { reason }),
  );

  /** The batch spans are written into now (null: none started). */
  let open: Batch | null = null;
  /** Closed batches waiting for their request, oldest first. */
  const ready: Batch[] = [];
  /** Spans in `open` and `ready`: what OTEL_BSP_MAX_QUEUE_SIZE bounds. */
  let queued = 0;
  const pool: Uint8Array[] = [];
  let sending: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  let dropped = 0;
  let failedSpans = 0;
  let lastProblem: { message: string; fields: Record<string, unknown> } | null = null;
  let warnedAt = 0;

  function problem(message: string, fields: Record<string, unknown>) {
    lastProblem = { message, fields };
    reportProblems(false);
  }

  /** Logs what went wrong since the last warning, at most once per WARN_EVERY_MS unless `now`. */
  function reportProblems(now: boolean) {
    if (dropped === 0 && failedSpans === 0 && lastProblem === null) return;
    const at = Date.now();
    if (!now && at - warnedAt < WARN_EVERY_MS) return;
    warnedAt = at;
    const fields: Record<string, unknown> = { ...(lastProblem?.fields ?? {}) };
    if (dropped > 0) fields.droppedSpans = dropped;
    if (failedSpans > 0) fields.failedSpans = failedSpans;
    warn("tracing: export problem", {
      message:
        lastProblem?.message ??
        `export queue full (OTEL_BSP_MAX_QUEUE_SIZE=${settings.maxQueueSize}): new spans dropped`,
      ...fields,
    });
    dropped = 0;
    failedSpans = 0;
    lastProblem = null;
  }

  /** One writer for every span: it writes into the open batch, and moves the span if it outgrows it. */
  const writer = new SpanWriter(
    suffix.length,
    (spanBytes, more) => {
      // The span being written does not fit: the batch goes without it, and the span continues
      // in a new one (as large as it needs, for a span larger than a batch).
      const full = open as Batch;
      if (full.spans > 0) close();
      else {
        open = null;
        if (full.bytes.length === BATCH_BYTES && pool.length < 4) pool.push(full.bytes);
      }
      const next = take(spanBytes + more + 4096);
      open = next;
      if (timer === null && settings.scheduleDelayMs > 0) {
        timer = setTimeout(close, settings.scheduleDelayMs);
        (timer as { unref?: () => void }).unref?.();
      }
      return next;
    },
    () => {
      const batch = open as Batch;
      batch.used = writer.pos;
      batch.spans += 1;
      queued += 1;
      if (batch.spans >= settings.maxBatchSize || settings.scheduleDelayMs === 0) close();
    },
  );

  function take(minBytes: number): Batch {
    const size = prefix.length + minBytes + suffix.length;
    const bytes =
      (size <= BATCH_BYTES ? pool.pop() : undefined) ?? sender.allocate(Math.max(BATCH_BYTES, size));
    bytes.set(prefix, 0);
    return { bytes, used: prefix.length, spans: 0 };
  }

  function close() {
    if (open === null) return;
    const batch = open;
    open = null;
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    batch.bytes.set(suffix, batch.used);
    batch.used += suffix.length;
    ready.push(batch);
    pump();
  }

  function pump() {
    if (sending !== null) return;
    const batch = ready.shift();
    if (batch === undefined) return;
    queued -= batch.spans;
    sending = sender.send(batch.bytes, batch.used).then((outcome) => {
      if (outcome.failed !== null) {
        failedSpans += batch.spans;
        problem(outcome.failed.message, outcome.failed.fields);
      } else if (outcome.rejected !== null) {
        problem("the collector rejected spans", outcome.rejected);
      }
      // Sent: the next batch is written into the same buffer.
      if (batch.bytes.length === BATCH_BYTES && pool.length < 4) pool.push(batch.bytes);
      sending = null;
      pump();
    });
  }

  return {
    span() {
      if (stopped) return null;
      if (queued >= settings.maxQueueSize) {
        dropped += 1;
        reportProblems(false);
        return null;
      }
      if (open === null) {
        open = take(0);
        if (settings.scheduleDelayMs > 0) {
          timer = setTimeout(close, settings.scheduleDelayMs);
          (timer as { unref?: () => void }).unref?.();
        }
      }
      writer.start(open);
      return writer;
    },

    async shutdown() {
      if (stopped) return;
      stopped = true;
      close();
      const deadline = Date.now() + settings.shutdownTimeoutMs;
      while ((sending !== null || ready.length > 0) && Date.now() < deadline) {
        const current = sending;
        if (current === null) pump();
        else
          await Promise.race([
            current,
            new Promise((resolve) => setTimeout(resolve, Math.max(1, deadline - Date.now()))),
          ]);
      }
      sender.stop();
      reportProblems(true);
    },
  };
}

/**
 * Writes one span's OTLP JSON straight into an export request's bytes: constant pieces copied,
 * ids and numbers as ASCII, strings JSON-escaped (a plain-ASCII string byte by byte, anything
 * else through JSON.stringify and UTF-8). No string is built for the span, so nothing is left
 * for the garbage collector. A write that would not fit moves the span to a new batch.
 */
export class SpanWriter {
  bytes: Uint8Array = EMPTY;
  pos = 0;
  /** Where the span began (before its comma), and where its own bytes begin. */
  spanStart = 0;
  #bodyStart = 0;

  constructor(
    private readonly reserve: number,
    /** Moves to a new batch with room for the span's bytes so far and `more`; returns it. */
    private readonly overflow: (spanBytes: number, more: number) => Batch,
    private readonly finished: () => void,
  ) {}

  /** Positions the writer at the end of `batch`, after a comma if it holds spans. */
  start(batch: Batch): void {
    this.bytes = batch.bytes;
    this.spanStart = batch.used;
    this.pos = batch.used;
    if (batch.spans > 0) this.bytes[this.pos++] = COMMA;
    this.#bodyStart = this.pos;
  }

  /** The span is written. */
  end(): void {
    this.finished();
  }

  /** Room for `n` more bytes (and the batch's closing bytes), moving the span to a new batch if needed. */
  room(n: number): void {
    if (this.pos + n + this.reserve <= this.bytes.length) return;
    // Copied out first: closing the batch writes its closing bytes where the span began.
    const partial = this.bytes.slice(this.#bodyStart, this.pos);
    const batch = this.overflow(partial.length, n + this.reserve);
    this.bytes = batch.bytes;
    this.spanStart = batch.used;
    this.#bodyStart = batch.used;
    batch.bytes.set(partial, batch.used);
    this.pos = batch.used + partial.length;
  }

  /** Constant bytes. */
  raw(chunk: Uint8Array): void {
    const n = chunk.length;
    this.room(n);
    // A loop: for pieces this short it beats TypedArray#set's call (measured).
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = 0; i < n; i++) bytes[pos++] = chunk[i] as number;
    this.pos = pos;
  }

  /** One byte (an ASCII character code). */
  byte(code: number): void {
    this.room(1);
    this.bytes[this.pos++] = code;
  }

  /** A string known to be plain ASCII with nothing to escape (ids, hex, digits). */
  ascii(text: string): void {
    const n = text.length;
    this.room(n);
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = 0; i < n; i++) bytes[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  /** `length` characters of `text` from `start`, known to be plain ASCII with nothing to escape. */
  asciiAt(text: string, start: number, length: number): void {
    this.room(length);
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = start, end = start + length; i < end; i++) bytes[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  /** A JSON string: quotes around the escaped text. */
  text(text: string): void {
    this.room(2);
    this.bytes[this.pos++] = QUOTE;
    this.chars(text);
    this.bytes[this.pos++] = QUOTE;
  }

  /** A string's content inside a JSON string (no quotes), escaped as JSON.stringify does. */
  chars(text: string): void {
    const n = text.length;
    this.room(n + 2);
    const bytes = this.bytes;
    const start = this.pos;
    let pos = start;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c === QUOTE || c === BACKSLASH || c > 0x7e) {
        // Escapes or non-ASCII: the runtime's JSON.stringify and UTF-8 encoder, from the start.
        const json = JSON.stringify(text);
        this.pos = start;
        this.room(json.length * 3);
        this.pos += UTF8.encodeInto(json.slice(1, -1), this.bytes.subarray(this.pos)).written;
        return;
      }
      bytes[pos++] = c;
    }
    this.pos = pos;
  }

  /** An integer as JSON digits (exact up to 2^53). */
  int(value: number): void {
    if (value >= 0 && value < 1e9 && value === Math.floor(value)) {
      this.room(10);
      this.pos = writeDigits(this.bytes, this.pos, value);
    } else {
      this.ascii(String(value));
    }
  }

  /** Epoch milliseconds as OTLP's quoted decimal string of nanoseconds, to the microsecond. */
  nanos(epochMillis: number): void {
    this.room(24);
    const micros = Math.round(epochMillis * 1000);
    const high = Math.floor(micros / 1e8); // ~1.8e7 for years to come; changes every 100 s
    let low = (micros - high * 1e8) | 0; // below 1e8: int32 arithmetic from here
    if (high !== this.#high) {
      this.#high = high;
      this.#highDigits = UTF8.encode(String(high));
    }
    const bytes = this.bytes;
    let pos = this.pos;
    bytes[pos++] = QUOTE;
    const digits = this.#highDigits;
    for (let i = 0; i < digits.length; i++) bytes[pos++] = digits[i] as number;
    for (let i = pos + 7; i >= pos; i--) {
      const rest = (low / 10) | 0;
      bytes[i] = 48 + low - rest * 10;
      low = rest;
    }
    pos += 8;
    bytes[pos++] = 48;
    bytes[pos++] = 48;
    bytes[pos++] = 48;
    bytes[pos++] = QUOTE;
    this.pos = pos;
  }
  #high = -1;
  #highDigits: Uint8Array = EMPTY;
}

/** Writes a non-negative integer below 1e9 as digits at `pos`; returns the position after them. */
function writeDigits(bytes: Uint8Array, pos: number, value: number): number {
  let rest = value | 0; // below 1e9: int32 arithmetic
  let digits = 1;
  for (let r = rest; r >= 10; r = (r / 10) | 0) digits++;
  for (let i = pos + digits - 1; i >= pos; i--) {
    const next = (rest / 10) | 0;
    bytes[i] = 48 + rest - next * 10;
    rest = next;
  }
  return pos + digits;
}

const EMPTY = new Uint8Array(0);
const UTF8 = new TextEncoder();
const QUOTE = 34;
const BACKSLASH = 92;
