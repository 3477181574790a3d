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

  /** The collector's answer to one POST: what the retry rule and the partialSuccess check read. */
  interface Answer {
    status: number;
    retryAfter: string | null;
    text: string;
  }

  const viaFetch = async (body: Uint8Array, deadline: number): Promise<Answer> => {
    const response = await fetch(transport.url, {
      method: "POST",
      headers,
      body: body as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
      ...tlsInit,
    });
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      text: await response.text(),
    };
  };

  /** A TCP socket as Bun.connect gives it (the little of it used here). */
  interface Socket {
    write(data: Uint8Array, byteOffset?: number, byteLength?: number): number;
    end(): void;
  }
  type Handler = (socket: Socket, more?: unknown) => void;
  type Connect = (options: {
    hostname: string;
    port: number;
    socket: Record<string, Handler>;
  }) => Promise<Socket>;
  type Parsed = Answer & { close: boolean };

  /**
   * Bun, plain http: the POST written on a kept-alive socket of its own instead of `fetch`
   * (issue 18: fetch's machinery and Bun's HTTP client thread cost more per request than the
   * bytes). HTTP/1.1: the answer's body by Content-Length, chunked, or until the collector
   * closes; a kept socket the collector closed meanwhile is replaced at once, without counting
   * as a failed attempt.
   */
  const viaSocket = (connect: Connect, url: URL) => {
    const encoder = new TextEncoder();
    let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const port = Number(url.port || 80);
    let socket: Socket | null = null;
    /** The request in flight: what is left to write, the answer's bytes so far, how it ends. */
    let flight: {
      writes: Uint8Array[];
      written: number;
      got: Uint8Array;
      used: number;
      done: (answer: Parsed) => void;
      fail: (error: Error) => void;
    } | null = null;

    const emptyLine = (bytes: Uint8Array, from: number, to: number): number => {
      for (let i = from; i + 3 < to; i++) {
        if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
      }
      return -1;
    };
    const lineEnd = (bytes: Uint8Array, from: number, to: number): number => {
      for (let i = from; i + 1 < to; i++) if (bytes[i] === 13 && bytes[i + 1] === 10) return i;
      return -1;
    };
    const latin1 = (bytes: Uint8Array, from: number, to: number): string => {
      let text = "";
      for (let i = from; i < to; i++) text += String.fromCharCode(bytes[i] as number);
      return text;
    };

    /** The answer in `bytes[0, used)` once it is complete (`closed`: the collector closed); else null. */
    const parse = (bytes: Uint8Array, used: number, closed: boolean): Parsed | null => {
      let start = 0;
      for (;;) {
        const headEnd = emptyLine(bytes, start, used);
        if (headEnd < 0) return null;
        const lines = latin1(bytes, start, headEnd).split("\r\n");
        const statusLine = lines[0] ?? "";
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
        if (!Number.isInteger(status)) throw new Error(`not an HTTP/1.1 answer: ${statusLine.slice(0, 60)}`);
        const fields = new Map<string, string>();
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
        }
        start = headEnd + 4;
        if (status < 200) continue; // 100 Continue and the like: the answer follows
        const close =
          fields.get("connection")?.toLowerCase() === "close" || statusLine.startsWith("HTTP/1.0");
        const answer = (body: Uint8Array): Parsed => ({
          status,
          retryAfter: fields.get("retry-after") ?? null,
          text: new TextDecoder().decode(body),
          close,
        });
        if (status === 204 || status === 304) return answer(bytes.subarray(start, start));
        if (fields.get("transfer-encoding")?.toLowerCase().includes("chunked")) {
          const parts: Uint8Array[] = [];
          let at = start;
          for (;;) {
            const end = lineEnd(bytes, at, used);
            if (end < 0) return null;
            const size = Number.parseInt(latin1(bytes, at, end), 16);
            if (!Number.isFinite(size)) throw new Error("malformed chunked answer");
            if (size === 0) {
              // The last chunk, then trailers (ignored) up to an empty line.
              const empty = end + 4 <= used && bytes[end + 2] === 13 && bytes[end + 3] === 10;
              if (!empty && emptyLine(bytes, end, used) < 0) return null;
              break;
            }
            if (end + 2 + size + 2 > used) return null;
            parts.push(bytes.subarray(end + 2, end + 2 + size));
            at = end + 2 + size + 2;
          }
          const body = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
          let offset = 0;
          for (const part of parts) {
            body.set(part, offset);
            offset += part.length;
          }
          return answer(body);
        }
        const length = fields.get("content-length");
        if (length !== undefined) {
          const n = Number(length);
          return start + n <= used ? answer(bytes.subarray(start, start + n)) : null;
        }
        // No length: the body ends with the connection.
        return closed ? { ...answer(bytes.subarray(start, used)), close: true } : null;
      }
    };

    const writeMore = (s: Socket) => {
      const current = flight;
      while (current !== null && current.writes.length > 0) {
        const chunk = current.writes[0] as Uint8Array;
        const n = s.write(chunk, current.written, chunk.length - current.written);
        if (n < 0) return current.fail(new Error("the connection to the collector failed"));
        current.written += n;
        if (current.written < chunk.length) return; // the rest when the socket drains
        current.writes.shift();
        current.written = 0;
      }
    };

    const ended = (s: Socket, error: Error) => {
      if (socket === s) socket = null;
      const current = flight;
      if (current === null) return;
      // An answer whose body runs until the connection closes is complete now.
      let answer: Parsed | null = null;
      try {
        answer = current.used > 0 ? parse(current.got, current.used, true) : null;
      } catch (malformed) {
        return current.fail(malformed as Error);
      }
      if (answer !== null) current.done(answer);
      else current.fail(error);
    };

    const open = () =>
      connect({
        hostname,
        port,
        socket: {
          data(s, chunk) {
            const current = flight;
            if (current === null || socket !== s) return;
            const bytes = chunk as Uint8Array;
            if (current.used + bytes.length > current.got.length) {
              const grown = new Uint8Array(Math.max(current.got.length * 2, current.used + bytes.length));
              grown.set(current.got.subarray(0, current.used));
              current.got = grown;
            }
            current.got.set(bytes, current.used);
            current.used += bytes.length;
            try {
              const answer = parse(current.got, current.used, false);
              if (answer !== null) current.done(answer);
            } catch (error) {
              current.fail(error as Error);
            }
          },
          drain: (s) => writeMore(s),
          end: (s) => ended(s, new Error("the collector closed the connection")),
          close: (s) => ended(s, new Error("the collector closed the connection")),
          error: (s, error) => ended(s, error as Error),
        },
      });

    const timedOut = (what: string) => {
      const error = new Error(what);
      error.name = "TimeoutError";
      return error;
    };

    /** One POST on the kept socket (a new one if there is none); `fresh`: the socket is new. */
    const once = async (
      body: Uint8Array,
      deadline: number,
    ): Promise<{ answer: Answer | null; error: Error | null; fresh: boolean }> => {
      const fresh = socket === null;
      let s = socket;
      if (s === null) {
        // Connecting counts against the request's time limit too.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), Math.max(1, deadline - Date.now()));
        });
        const opening = open();
        try {
          s = await Promise.race([opening, late]);
        } finally {
          clearTimeout(timer);
        }
        if (s === null) {
          opening.then(
            (lateSocket) => lateSocket.end(),
            () => {},
          );
          return { answer: null, error: timedOut("connecting to the collector timed out"), fresh };
        }
        socket = s;
      }
      const connected = s;
      const requestHead = encoder.encode(`${head}content-length: ${body.length}\r\n\r\n`);
      return new Promise((resolve) => {
        const finish = (answer: Parsed | null, error: Error | null) => {
          if (flight === null) return;
          flight = null;
          clearTimeout(timer);
          // Anything but a complete answer on a connection kept open leaves the socket unusable.
          if (answer === null || answer.close) {
            if (socket === connected) socket = null;
            connected.end();
          }
          resolve({ answer, error, fresh });
        };
        const timer = setTimeout(
          () => finish(null, timedOut("the export request timed out")),
          Math.max(1, deadline - Date.now()),
        );
        flight = {
          writes: [requestHead, body],
          written: 0,
          got: new Uint8Array(1024),
          used: 0,
          done: (answer) => finish(answer, null),
          fail: (error) => finish(null, error),
        };
        writeMore(connected);
      });
    };

    return async (body: Uint8Array, deadline: number): Promise<Answer> => {
      let sent = await once(body, deadline);
      // A kept socket the collector had closed: once more on a new one, at once.
      if (sent.answer === null && !sent.fresh && sent.error?.name !== "TimeoutError") {
        sent = await once(body, deadline);
      }
      if (sent.answer === null) throw sent.error ?? new Error("the export request failed");
      return sent.answer;
    };
  };

  const bunConnect = (globalThis as { Bun?: { connect?: Connect } }).Bun?.connect;
  const target = new URL(transport.url);
  // Header values go on the wire as given: one with a line break is left to fetch to refuse.
  const plain = Object.entries(headers).every(([name, value]) => !/[\r\n]/.test(name + value));
  const post =
    bunConnect !== undefined && target.protocol === "http:" && plain
      ? viaSocket(bunConnect, target)
      : viaFetch;

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
        const answer = await post(body, deadline);
        const text = answer.text;
        if (answer.status >= 200 && answer.status < 300) {
          // A collector may accept a request and still reject some of its spans (partialSuccess).
          const rejected = text.includes('"rejectedSpans"') ? partialRejection(text) : null;
          return { failed: null, rejected };
        }
        message = `the collector answered ${answer.status}`;
        fields = { status: answer.status, body: text.slice(0, 300) };
        if (!RETRYABLE.includes(answer.status)) return { failed: { message, fields }, rejected: null };
        retryAfterMs = retryAfter(answer.retryAfter);
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
