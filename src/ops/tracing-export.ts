// The OTLP/HTTP export of outboxd's spans (DESIGN §14), behind ./tracing-sdk.ts and loaded only
// when tracing is on. Each span is written, as it ends, straight into a pooled byte buffer that
// is already the body of an export request, in the format the standard variables choose
// (OTLP protobuf, ./tracing-otlp-proto.ts, the default; or OTLP JSON, ./tracing-otlp-json.ts),
// so a span leaves no object behind on the heap: nothing to keep alive until the export, to
// trace through garbage collections, or to turn into an OTLP object tree and a string later
// (the SDK's BatchSpanProcessor, transformer and node:http transport cost most of what tracing
// cost a loaded server; docs/benchmarks.md).
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

/** One export request being filled: its buffer, how far it is written, how many spans it holds. */
export interface Batch {
  bytes: Uint8Array;
  used: number;
  spans: number;
}

/** What a span is: its ids, as offsets into the strings that hold them (see Begun in ./tracing-sdk.ts). */
export interface SpanIds {
  /** Holds the trace id at `traceAt`, and the parent's span id at `parentAt` (-1: a root span). */
  readonly idSource: string;
  readonly traceAt: number;
  readonly parentAt: number;
  /** Holds the span's own id at `spanAt`. */
  readonly spanSource: string;
  readonly spanAt: number;
}

/** OTLP span kinds (the API's SpanKind + 1). */
export const INTERNAL = 1;
export const SERVER = 2;
export const CLIENT = 3;

/** An attribute key: its UTF-8 bytes, and each format's encoding of it, made at first use. */
export class AttributeKey {
  readonly utf8: Uint8Array;
  json: Uint8Array | null = null;
  proto: Uint8Array | null = null;
  constructor(readonly name: string) {
    this.utf8 = UTF8.encode(name);
  }
}

/**
 * What a span is written with, whatever the format: `head`, then its attributes, then `end`
 * (which queues it). Attribute values: strings, numbers (integers as intValue, others as
 * doubleValue), booleans.
 */
export interface SpanWriter {
  /** The ids, the name (`name`, or `name` + " " + `detail`), the kind, start and end. */
  head(ids: SpanIds, name: string, detail: string | null, kind: number, startMs: number, endMs: number): void;
  string(key: AttributeKey, value: string): void;
  number(key: AttributeKey, value: number): void;
  bool(key: AttributeKey, value: boolean): void;
  /** The status (ERROR, with `message` if any; else unset) and the OTLP span flags; the span is queued. */
  end(error: boolean, message: string | null, flags: number): void;
}

/** An OTLP encoding of export requests: how a batch begins and ends, and its span writer. */
export interface OtlpFormat {
  contentType: string;
  /** Prepares a new batch's buffer; returns where its first span goes. */
  open(bytes: Uint8Array): number;
  /** Bytes `close` needs after the last span (kept free while spans are written). */
  readonly closingBytes: number;
  /** Finishes a batch (its spans end at `batch.used`, which moves past any closing bytes); returns where its request body begins. */
  close(batch: Batch): number;
  /** The writer of spans into batches; `overflow` and `finished` as BatchWriter takes them. */
  writer(overflow: Overflow, finished: () => void): BatchWriter & SpanWriter;
}

/** Moves a span being written to a new batch with room for its bytes so far and `more`; returns it. */
export type Overflow = (spanBytes: number, more: number) => Batch;

export interface SpanExporter {
  /**
   * The writer of one finished span, positioned in the next export request; null when the
   * queue is full (the span is dropped and counted). Write the span, ending with end().
   */
  span(): SpanWriter | null;
  /** Exports everything queued so far and stops; later spans are dropped. Safe twice. */
  shutdown(): Promise<void>;
}

/** The buffer size spans are written into: a batch of 512 typical spans fits (JSON ~500 bytes each). */
const BATCH_BYTES = 512 * 1024;
/** Warnings about drops and failed exports: at most one per this many ms (collector down). */
const WARN_EVERY_MS = 10_000;

/** The span queue and its OTLP/HTTP export in `format`. */
export function otlpExporter(
  settings: ExportSettings,
  format: OtlpFormat,
  userAgent: string,
  warn: Warn,
): SpanExporter {
  const sender = batchSender(
    {
      url: settings.url,
      headers: { ...settings.headers, "content-type": format.contentType, "user-agent": userAgent },
      timeoutMs: settings.timeoutMs,
      gzip: settings.gzip,
      tls: settings.tls,
    },
    (reason) => warn("tracing: exports are sent from the main thread", { reason }),
  );

  /** The batch spans are written into now (null: none started). */
  let open: Batch | null = null;
  /** Closed batches waiting for their request, oldest first, with where their body begins. */
  const ready: { batch: Batch; start: number }[] = [];
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
  const writer = format.writer(
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

  /** A batch with room for `minBytes` of spans (a pooled buffer when that fits in one). */
  function take(minBytes: number): Batch {
    const pooled = minBytes + format.closingBytes + 1024 <= BATCH_BYTES ? pool.pop() : undefined;
    const bytes = pooled ?? sender.allocate(Math.max(BATCH_BYTES, minBytes + format.closingBytes + 4096));
    return { bytes, used: format.open(bytes), spans: 0 };
  }

  function close() {
    if (open === null) return;
    const batch = open;
    open = null;
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    ready.push({ batch, start: format.close(batch) });
    pump();
  }

  function pump() {
    if (sending !== null) return;
    const next = ready.shift();
    if (next === undefined) return;
    const { batch, start } = next;
    queued -= batch.spans;
    sending = sender.send(batch.bytes, start, batch.used).then((outcome) => {
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
 * Writes bytes of one span straight into an export request's buffer, whatever the format (the
 * formats' writers extend it): constant pieces copied, ASCII copied char by char. A write that
 * would not fit moves the span so far to a new batch (`overflow`), so nothing is built for a
 * span on the heap.
 */
export abstract class BatchWriter {
  bytes: Uint8Array = EMPTY;
  pos = 0;
  /** Where the span's own bytes begin (moved with them on overflow). */
  spanAt = 0;

  constructor(
    /** Bytes kept free at the end of a batch for its closing. */
    private readonly reserve: number,
    private readonly overflow: Overflow,
    /** The span is written: the exporter queues it. */
    protected readonly finished: () => void,
  ) {}

  /** Positions the writer at the end of `batch` for a new span. */
  start(batch: Batch): void {
    this.bytes = batch.bytes;
    this.pos = batch.used;
    this.spanAt = batch.used;
  }

  /** Room for `n` more bytes (and the batch's closing bytes), moving the span to a new batch if needed. */
  room(n: number): void {
    if (this.pos + n + this.reserve <= this.bytes.length) return;
    // Copied out first: closing the batch may write where the span began.
    const partial = this.bytes.slice(this.spanAt, this.pos);
    const batch = this.overflow(partial.length, n + this.reserve);
    this.bytes = batch.bytes;
    this.spanAt = batch.used;
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

  /** One byte. */
  byte(value: number): void {
    this.room(1);
    this.bytes[this.pos++] = value;
  }

  /** `length` characters of `text` from `start`, known to be plain ASCII. */
  asciiAt(text: string, start: number, length: number): void {
    this.room(length);
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = start, end = start + length; i < end; i++) bytes[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }
}

const EMPTY = new Uint8Array(0);
export const UTF8 = new TextEncoder();
