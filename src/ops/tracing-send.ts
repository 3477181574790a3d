// The export requests of ./tracing-export.ts, off the thread that serves commits (issue 18). An
// export is one POST of a ready body, but Bun's `fetch` of a ~350 KB body cost the main thread
// about a millisecond per batch: a quarter of what tracing still cost a loaded server. So the
// batches are written into SharedArrayBuffers and a worker, given one (shared, not copied),
// copies it, compresses, sends, retries and reads the answer; the buffer is then written again.
// (Transferring plain ArrayBuffers back and forth cost the main thread as much as the `fetch`:
// each returned 512 KiB buffer counts as new memory and brings garbage collections forward.)
//
// The worker is made from the source of `exportSender` below (a Blob URL), the same function
// that sends in this thread when no worker can start: it has no module to resolve, whatever
// runs it (source, Deno, the compiled executable). `exportSender` must therefore reach nothing
// outside its own body but the runtime's globals.

/** What an export request needs, given to the worker once. */
export interface Transport {
  url: string;
  headers: Record<string, string>;
  /** A request's time limit, retries included. */
  timeoutMs: number;
  gzip: boolean;
  /** Client TLS material (PEM) for the collector. */
  tls: { ca?: string; cert?: string; key?: string } | null;
}

/** What became of one export request: nothing to report, or a failure, or spans the collector refused. */
export interface SendOutcome {
  /** The request failed for good (its spans are lost): why. */
  failed: { message: string; fields: Record<string, unknown> } | null;
  /** Accepted, but the collector rejected some spans (OTLP partialSuccess). */
  rejected: Record<string, unknown> | null;
}

/**
 * The sender of export bodies to the collector: POST, retried on 429/502/503/504 and network
 * errors with backoff (honouring Retry-After) within the timeout, gzip when asked (the standard
 * CompressionStream, in Bun and Deno alike). Self-contained: its source runs as the worker.
 */
export function exportSender(transport: Transport): (body: Uint8Array) => Promise<SendOutcome> {
  const RETRYABLE = [429, 502, 503, 504];
  const MAX_ATTEMPTS = 5;
  const tls = transport.tls;
  // Client TLS: Bun's `tls` fetch option, Deno's HTTP client.
  const deno = (globalThis as { Deno?: { createHttpClient(options: unknown): unknown } }).Deno;
  const tlsInit: Record<string, unknown> =
    tls === null
      ? {}
      : deno
        ? {
            client: deno.createHttpClient({
              caCerts: tls.ca ? [tls.ca] : undefined,
              cert: tls.cert,
              key: tls.key,
            }),
          }
        : { tls: { ca: tls.ca, cert: tls.cert, key: tls.key } };
  const headers = { ...transport.headers };
  if (transport.gzip) headers["content-encoding"] = "gzip";

  /** Retry-After as ms: delta-seconds or an HTTP date; null when absent or unreadable. */
  const retryAfter = (value: string | null): number | null => {
    if (!value) return null;
    const seconds = Number(value);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(value);
    return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
  };
  const partialRejection = (text: string): Record<string, unknown> | null => {
    try {
      const partial = (
        JSON.parse(text) as { partialSuccess?: { rejectedSpans?: unknown; errorMessage?: unknown } }
      ).partialSuccess;
      const rejected = Number(partial?.rejectedSpans ?? 0);
      return rejected > 0 ? { rejectedSpans: rejected, detail: String(partial?.errorMessage ?? "") } : null;
    } catch {
      return null;
    }
  };

  return async (raw) => {
    const body = transport.gzip
      ? new Uint8Array(
          await new Response(
            new Blob([raw as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip")),
          ).arrayBuffer(),
        )
      : raw;
    const deadline = Date.now() + transport.timeoutMs;
    let delay = 1000;
    for (let attempt = 1; ; attempt++) {
      let retryAfterMs: number | null = null;
      let message: string;
      let fields: Record<string, unknown>;
      try {
        const response = await fetch(transport.url, {
          method: "POST",
          headers,
          body: body as Uint8Array<ArrayBuffer>,
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
          ...tlsInit,
        });
        const text = await response.text();
        if (response.ok) {
          // A collector may accept a request and still reject some of its spans (partialSuccess).
          const rejected = text.includes('"rejectedSpans"') ? partialRejection(text) : null;
          return { failed: null, rejected };
        }
        message = `the collector answered ${response.status}`;
        fields = { status: response.status, body: text.slice(0, 300) };
        if (!RETRYABLE.includes(response.status)) return { failed: { message, fields }, rejected: null };
        retryAfterMs = retryAfter(response.headers.get("retry-after"));
      } catch (error) {
        message = "export request failed";
        fields = { error: String(error) };
        if ((error as { name?: string }).name === "TimeoutError") {
          return { failed: { message, fields }, rejected: null };
        }
      }
      const wait = retryAfterMs ?? delay * (0.8 + Math.random() * 0.4);
      if (attempt >= MAX_ATTEMPTS || Date.now() + wait >= deadline) {
        return { failed: { message, fields }, rejected: null };
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      delay = Math.min(delay * 1.5, 5000);
    }
  };
}

/**
 * The worker: the transport first (it answers "ready"), then one batch at a time, answered with
 * its outcome; the buffer is written again only after that answer. A buffer comes with an id
 * the first time (and again if the worker has let it go: it keeps the last KEPT_BUFFERS);
 * after that only its id and the batch's bounds come. Bun's `fetch` sends a view of the shared
 * bytes as it is; Deno's takes no view of shared memory, so there it gets a copy.
 */
const WORKER_SOURCE = `const exportSender = ${exportSender.toString()};
let send = null;
const buffers = new Map();
onmessage = async (event) => {
  const message = event.data;
  if (message.transport) {
    send = exportSender(message.transport);
    postMessage("ready");
    return;
  }
  if (message.shared) {
    buffers.set(message.id, message.shared);
    if (message.evict !== undefined) buffers.delete(message.evict);
  }
  const shared = new Uint8Array(buffers.get(message.id), message.start, message.end - message.start);
  postMessage(await send(typeof Deno === "object" ? shared.slice() : shared));
};
`;

/**
 * How many shared buffers the worker keeps (the exporter reuses up to 4, one more may be in
 * flight). Posting a SharedArrayBuffer cost the main thread 40-700 µs each time in Bun once its
 * pages had been written (measured, issue 18: most of a batch's cost on that thread), a message
 * of numbers a few µs; so each buffer is posted once, and then named.
 */
const KEPT_BUFFERS = 8;

export interface BatchSender {
  /** A zeroed buffer of `size` bytes that `send` can hand to the worker without copying it. */
  allocate(size: number): Uint8Array;
  /** Sends `bytes[start, end)`; the bytes may be written again once this answers. One batch at a time. */
  send(bytes: Uint8Array, start: number, end: number): Promise<SendOutcome>;
  /** Ends the worker (after the last send). */
  stop(): void;
}

/**
 * Sends batches on a worker, started at the first batch; in this thread when no worker starts
 * (no batch is handed over before it says it is ready) or after one failed (`broken` says why, once).
 */
export function batchSender(transport: Transport, broken: (reason: string) => void): BatchSender {
  const shared = typeof SharedArrayBuffer === "function";
  let url: string | null = null;
  /** The worker once it is ready; null when there is none (then sends run in this thread). */
  let started: Promise<Worker | null> | null = null;
  let running: Worker | null = null;
  let inThread: ((body: Uint8Array) => Promise<SendOutcome>) | null = null;
  let waiting: ((outcome: SendOutcome) => void) | null = null;
  /** Each buffer's id (weakly: the exporter lets buffers go), and those the worker holds, oldest first. */
  const ids = new WeakMap<ArrayBufferLike, number>();
  let nextId = 0;
  const held: number[] = [];

  function start(): Promise<Worker | null> {
    started ??= new Promise((resolve) => {
      let worker: Worker | undefined;
      const give = (reason: string) => {
        worker?.terminate();
        running = null;
        started = Promise.resolve(null);
        broken(reason);
        resolve(null);
        // The batch it held is not known to have gone: its spans are counted as failed.
        const answer = waiting;
        waiting = null;
        answer?.({ failed: { message: reason, fields: {} }, rejected: null });
      };
      try {
        if (!shared) throw new Error("no SharedArrayBuffer");
        url ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
        const isBun = typeof (globalThis as { Bun?: unknown }).Bun === "object";
        // smol (Bun): a small heap; the worker holds one batch at a time.
        held.length = 0; // a new worker holds no buffer yet
        const created = new Worker(url, {
          type: "module",
          ...(isBun ? { smol: true } : {}),
        } as WorkerOptions);
        worker = created;
        // It must not keep the process alive on its own (Bun; Deno's workers have no unref).
        (created as { unref?: () => void }).unref?.();
        created.onmessage = (event: MessageEvent) => {
          if (event.data === "ready") {
            running = created;
            resolve(created);
            return;
          }
          const answer = waiting;
          waiting = null;
          answer?.(event.data as SendOutcome);
        };
        created.onerror = (event: ErrorEvent) => {
          event.preventDefault?.();
          give(`the export worker failed: ${event.message}`);
        };
        created.postMessage({ transport });
      } catch (error) {
        give(`no export worker: ${String(error)}`);
      }
    });
    return started;
  }

  return {
    allocate: (size) => new Uint8Array(shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size)),
    async send(bytes, from, end) {
      const worker = await start();
      if (worker === null) {
        inThread ??= exportSender(transport);
        return inThread(shared ? bytes.slice(from, end) : bytes.subarray(from, end));
      }
      let id = ids.get(bytes.buffer);
      if (id === undefined) {
        id = nextId++;
        ids.set(bytes.buffer, id);
      }
      const message: Record<string, unknown> = { id, start: from, end };
      if (!held.includes(id)) {
        held.push(id);
        message.shared = bytes.buffer;
        if (held.length > KEPT_BUFFERS) message.evict = held.shift();
      }
      return new Promise<SendOutcome>((resolve) => {
        waiting = resolve;
        worker.postMessage(message);
      });
    },
    stop() {
      running?.terminate();
      running = null;
      started = null;
      if (url !== null) URL.revokeObjectURL(url);
      url = null;
    },
  };
}
