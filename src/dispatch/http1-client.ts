// A webhook POST over HTTP/1.1 written by hand on Bun's sockets (`Bun.connect`, TCP or TLS), with
// keep-alive connections per target. Bun's `fetch` costs ~31 us per request on its "HTTP Client"
// thread plus ~17 us on the calling thread, and its requests ~27-35 us of the receiver's; this
// client ~15 us in all on the calling thread, and the receiver ~19 (issue 12, session 10). It does
// what the webhook exchange (exchange.ts) asks of `fetch` and no more: one POST with the given
// headers, no redirects followed (a 3xx is an answer like any other), the status, Retry-After and
// at most `prefixBytes` of the body kept (decoded as the fetch path decodes it), and a failure
// (never a throw) for everything else, with the name and code `fetch` would give: TimeoutError,
// ECONNREFUSED, ECONNRESET, the TLS verification codes.
//
// Connections: one exchange at a time each (no pipelining). A connection goes back to its
// target's idle list only once its answer was read to the end; a body that goes on after the
// prefix by more than DRAIN_LIMIT (or until the close) is not read: its connection is closed. Idle
// connections are closed by one sweep after IDLE_MS, shorter than common servers' keep-alive
// timeouts (Node 5 s, Bun 10 s, nginx 75 s), and no more than MAX_IDLE are kept; the sends in
// flight are bounded by the dispatcher's slots, so open connections are at most those plus MAX_IDLE.
import type { Socket, SocketHandler, TLSOptions } from "bun";
import { AnswerParser } from "./http1-answer.ts";

/** What one exchange asks (exchange.ts Exchange, signed). */
export interface Http1Post {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** The TLS server name (SNI and certificate verification) of a request pinned to an address. */
  serverName: string | undefined;
}

/** exchange.ts ExchangeResult: the answer, or a failure named as `fetch` names it. */
export interface Http1Answer {
  statusCode: number | null;
  responsePrefix: string | null;
  retryAfter: string | null;
  failure: { name?: string | undefined; code?: string | undefined; message: string } | null;
}

export interface Http1Options {
  /** How much of an answer's body is kept. */
  prefixBytes: number;
  /** Certificate authorities trusted instead of the system's (tests). */
  ca?: string | undefined;
  idleMs?: number | undefined;
  maxIdle?: number | undefined;
}

/** Idle connections older than this are closed (one sweep a second). */
export const IDLE_MS = 3_000;
const SWEEP_MS = 1_000;
/** Idle connections kept in all. */
export const MAX_IDLE = 256;
/** Body bytes read past the prefix to keep a connection; a longer body closes it instead. */
export const DRAIN_LIMIT = 64 * 1024;
/** Parsed targets kept (one per endpoint URL and server name). */
const TARGETS = 1024;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space and tab: no CR, LF or NUL (request splitting), nothing to encode. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

const decoder = new TextDecoder();

interface Target {
  /** The idle list's key: scheme, address, port and TLS server name. */
  key: string;
  hostname: string;
  port: number;
  tls: TLSOptions | null;
  /** Path and query, as sent on the request line. */
  path: string;
  /** The Host header unless the sender gives one. */
  host: string;
}

/** One exchange until it is answered, or has failed, and its connection let go. */
class Pending {
  readonly resolve: (answer: Http1Answer) => void;
  readonly request: string;
  /** The request's size in bytes (its head is ASCII). */
  readonly bytes: number;
  readonly target: Target;
  readonly parser: AnswerParser;
  timer: ReturnType<typeof setTimeout> | null = null;
  /** The answer (or failure) was given; the connection may still be reading the rest. */
  settled = false;
  /** Retried once on a new connection already. */
  retried = false;
  /** A byte of the answer arrived. */
  heard = false;
  connection: Connection | null = null;

  constructor(
    resolve: (answer: Http1Answer) => void,
    request: string,
    bytes: number,
    target: Target,
    prefixBytes: number,
  ) {
    this.resolve = resolve;
    this.request = request;
    this.bytes = bytes;
    this.target = target;
    this.parser = new AnswerParser(prefixBytes);
  }
}

class Connection {
  readonly client: Http1Client;
  readonly target: Target;
  socket: Socket<Connection> | null = null;
  exchange: Pending | null = null;
  /** Answers read to the end on it. */
  used = 0;
  idleSince = 0;
  idle = false;
  closed = false;
  /** Let go before it opened (timeout): closed as soon as it does. */
  abandoned = false;
  /** Bytes the socket did not take yet (backpressure). */
  unsent: Buffer | null = null;
  /** The error reported before the close, if any. */
  error: (Error & { code?: string }) | null = null;

  constructor(client: Http1Client, target: Target) {
    this.client = client;
    this.target = target;
  }
}

export class Http1Client {
  readonly #prefixBytes: number;
  readonly #ca: string | undefined;
  readonly #idleMs: number;
  readonly #maxIdle: number;
  readonly #targets = new Map<string, Target | string>();
  /** Idle connections per target key, oldest first. */
  readonly #idle = new Map<string, Connection[]>();
  #idleCount = 0;
  #open = 0;
  #sweeper: ReturnType<typeof setInterval> | null = null;
  readonly #handlers: SocketHandler<Connection>;

  constructor(options: Http1Options) {
    this.#prefixBytes = options.prefixBytes;
    this.#ca = options.ca;
    this.#idleMs = options.idleMs ?? IDLE_MS;
    this.#maxIdle = options.maxIdle ?? MAX_IDLE;
    // One handler object for every socket (Bun's cheaper path); each socket's data is its Connection.
    this.#handlers = {
      open: (socket) => {
        const c = socket.data;
        c.socket = socket;
        // No socket keeps the process alive: an exchange's timer does while it runs, and an idle
        // connection must not (one call per connection instead of a ref and unref per exchange).
        socket.unref();
        if (c.target.tls === null) this.#ready(c);
      },
      handshake: (socket, success, error) => {
        const c = socket.data;
        if (success && error === null) this.#ready(c);
        else this.#refused(c, error ?? new Error("TLS handshake failed"));
      },
      data: (socket, bytes) => this.#data(socket.data, bytes),
      drain: (socket) => this.#drain(socket.data),
      end: (socket) => {
        // The server's FIN: no more of the answer comes (allowHalfOpen is off: Bun closes too).
        this.#closed(socket.data);
      },
      close: (socket, error) => {
        const c = socket.data;
        if (error && !c.error) c.error = error as Connection["error"];
        this.#closed(c);
      },
      error: (socket, error) => {
        const c = socket.data;
        c.error = error;
        socket.terminate();
        this.#closed(c);
      },
      connectError: (socket, error) => this.#refused(socket.data, error),
    };
  }

  /** Open connections: in use and idle (tests, and the leak checks). */
  get openConnections(): number {
    return this.#open;
  }

  get idleConnections(): number {
    return this.#idleCount;
  }

  /** One POST; never rejects. */
  post(request: Http1Post): Promise<Http1Answer> {
    const target = this.#target(request.url, request.serverName);
    if (typeof target === "string") return Promise.resolve(failed("TypeError", undefined, target));
    let text: string;
    let bytes: number;
    try {
      const bodyBytes = Buffer.byteLength(request.body);
      text = requestHead(target, request.headers, bodyBytes);
      bytes = text.length + bodyBytes;
      text += request.body;
    } catch (error) {
      return Promise.resolve(failed("TypeError", undefined, (error as Error).message));
    }
    return new Promise<Http1Answer>((resolve) => {
      const p = new Pending(resolve, text, bytes, target, this.#prefixBytes);
      p.timer = setTimeout(() => this.#timedOut(p), request.timeoutMs);
      const idle = this.#idle.get(target.key);
      const c = idle?.pop();
      if (c === undefined) this.#connect(p);
      else {
        this.#idleCount--;
        c.idle = false;
        this.#send(c, p);
      }
    });
  }

  /** Closes the idle connections (those in use close when their exchange ends, if idle then). */
  closeIdle(): void {
    for (const list of this.#idle.values()) for (const c of list) this.#let(c, false);
    this.#idle.clear();
    this.#idleCount = 0;
    this.#stopSweeper();
  }

  #target(url: string, serverName: string | undefined): Target | string {
    const key = serverName === undefined ? url : `${url} ${serverName}`;
    let target = this.#targets.get(key);
    if (target === undefined) {
      target = parseTarget(url, serverName, this.#ca);
      if (this.#targets.size >= TARGETS) this.#targets.clear();
      this.#targets.set(key, target);
    }
    return target;
  }

  #connect(p: Pending): void {
    const target = p.target;
    const c = new Connection(this, target);
    c.exchange = p;
    p.connection = c;
    this.#open++;
    Bun.connect<Connection>({
      hostname: target.hostname,
      port: target.port,
      ...(target.tls === null ? {} : { tls: target.tls }),
      data: c,
      socket: this.#handlers,
    }).catch(() => {
      // connectError has it.
    });
  }

  /** Connected (and verified, for TLS): the request goes. */
  #ready(c: Connection): void {
    const p = c.exchange;
    if (c.abandoned || p === null) {
      this.#let(c, true);
      return;
    }
    this.#write(c, p);
  }

  #send(c: Connection, p: Pending): void {
    c.exchange = p;
    p.connection = c;
    this.#write(c, p);
  }

  #write(c: Connection, p: Pending): void {
    const socket = c.socket as Socket<Connection>;
    const written = socket.write(p.request);
    if (written === p.bytes) return;
    if (written < 0) {
      // Closed meanwhile: the close handler answers the exchange.
      return;
    }
    c.unsent = Buffer.from(p.request).subarray(written);
  }

  #drain(c: Connection): void {
    const unsent = c.unsent;
    if (unsent === null || c.socket === null) return;
    const written = c.socket.write(unsent);
    c.unsent = written >= unsent.length ? null : unsent.subarray(Math.max(0, written));
  }

  #data(c: Connection, bytes: Buffer): void {
    const p = c.exchange;
    if (p === null) {
      // Bytes no exchange asked for (an idle connection): it cannot be trusted for the next one.
      this.#let(c, true);
      return;
    }
    p.heard = true;
    const parser = p.parser;
    const at = parser.feed(bytes);
    if (parser.error !== null) {
      this.#settle(p, failed("Error", "HPE_INVALID", `malformed answer: ${parser.error}`));
      this.#end(p);
      this.#let(c, true);
      return;
    }
    if (parser.done) {
      this.#settle(p, answerOf(parser));
      this.#end(p);
      // Bytes past the answer (none was asked for), or a server that closes: not kept.
      if (at < bytes.length || !parser.keepAlive) this.#let(c, true);
      else this.#release(c);
      return;
    }
    if (!parser.prefixComplete) return;
    if (!p.settled) this.#settle(p, answerOf(parser));
    // The rest is read only to keep the connection, and only when it is short.
    if (
      parser.untilClose ||
      parser.bodyBytes + Math.max(0, parser.bodyLeft) > this.#prefixBytes + DRAIN_LIMIT
    ) {
      this.#end(p);
      this.#let(c, true);
    }
  }

  /** The connection closed (or failed): its exchange, if any, ends with what it has. */
  #closed(c: Connection): void {
    if (c.closed) return;
    c.closed = true;
    this.#open--;
    if (c.idle) this.#unidle(c);
    const p = c.exchange;
    c.exchange = null;
    if (p === null) return;
    if (p.settled) {
      this.#end(p);
      return;
    }
    const parser = p.parser;
    parser.closed();
    if (parser.done || parser.headRead) {
      // A body delimited by the close, or cut short: what arrived of it is the prefix, as on the
      // fetch path (a body cut short still leaves its prefix).
      this.#settle(p, answerOf(parser));
      this.#end(p);
      return;
    }
    if (!p.heard && c.used > 0 && !p.retried) {
      // A kept-alive connection closed before any byte of the answer: most often the server's
      // idle timeout crossing the request. Sent once more on a new connection; the server may
      // have acted on the first, and a second delivery is what at-least-once allows (DESIGN §1).
      p.retried = true;
      this.#connect(p);
      return;
    }
    const error = c.error;
    this.#settle(
      p,
      failed(
        error?.name ?? "Error",
        error?.code ?? "ECONNRESET",
        error?.message ?? "The socket connection was closed unexpectedly",
      ),
    );
    this.#end(p);
  }

  /** The connection never carried a request: refused, unreachable, or its TLS not verified. */
  #refused(c: Connection, error: Error & { code?: string }): void {
    if (!c.closed) {
      c.closed = true;
      this.#open--;
    }
    c.socket?.terminate();
    const p = c.exchange;
    c.exchange = null;
    if (p === null) return;
    this.#settle(p, failed(error.name, error.code, error.message || "Unable to connect"));
    this.#end(p);
  }

  #timedOut(p: Pending): void {
    p.timer = null;
    if (!p.settled)
      this.#settle(
        p,
        // The head came and the body is slow: as on the fetch path, the answer with what came.
        p.parser.headRead
          ? answerOf(p.parser)
          : failed("TimeoutError", undefined, "The operation timed out."),
      );
    const c = p.connection;
    if (c !== null && c.exchange === p) {
      c.exchange = null;
      this.#let(c, true);
    }
  }

  #settle(p: Pending, answer: Http1Answer): void {
    if (p.settled) return;
    p.settled = true;
    p.resolve(answer);
  }

  /** The exchange holds its connection no more: its timer goes. */
  #end(p: Pending): void {
    if (p.timer !== null) {
      clearTimeout(p.timer);
      p.timer = null;
    }
  }

  /** Closes a connection: at once (`abort`: it may be mid-answer) or with a FIN (idle). */
  #let(c: Connection, abort: boolean): void {
    c.exchange = null;
    const socket = c.socket;
    if (socket === null) {
      // Not open yet: closed when it opens (open or connectError will come).
      c.abandoned = true;
      return;
    }
    if (abort) socket.terminate();
    else socket.end();
    this.#closed(c);
  }

  /** An answer read to the end on a connection that stays open: idle, for the next exchange. */
  #release(c: Connection): void {
    c.exchange = null;
    c.used++;
    if (this.#idleCount >= this.#maxIdle || c.socket === null) {
      this.#let(c, false);
      return;
    }
    c.idle = true;
    c.idleSince = Date.now();
    let list = this.#idle.get(c.target.key);
    if (list === undefined) {
      list = [];
      this.#idle.set(c.target.key, list);
    }
    list.push(c);
    this.#idleCount++;
    this.#sweeper ??= startSweeper(() => this.#sweep(), SWEEP_MS);
  }

  #unidle(c: Connection): void {
    c.idle = false;
    const list = this.#idle.get(c.target.key);
    const i = list?.indexOf(c) ?? -1;
    if (list === undefined || i < 0) return;
    list.splice(i, 1);
    this.#idleCount--;
    if (list.length === 0) this.#idle.delete(c.target.key);
    if (this.#idleCount === 0) this.#stopSweeper();
  }

  #sweep(): void {
    const before = Date.now() - this.#idleMs;
    for (const [key, list] of this.#idle) {
      let old = 0;
      while (old < list.length && (list[old] as Connection).idleSince <= before) old++;
      if (old === 0) continue;
      const closing = list.splice(0, old);
      this.#idleCount -= old;
      if (list.length === 0) this.#idle.delete(key);
      for (const c of closing) {
        c.idle = false;
        this.#let(c, false);
      }
    }
    if (this.#idleCount === 0) this.#stopSweeper();
  }

  #stopSweeper(): void {
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
  }
}

function startSweeper(sweep: () => void, ms: number): ReturnType<typeof setInterval> {
  const timer = setInterval(sweep, ms);
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

function parseTarget(url: string, serverName: string | undefined, ca: string | undefined): Target | string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "the URL is invalid";
  }
  const secure = u.protocol === "https:";
  if (!secure && u.protocol !== "http:") return `unsupported protocol ${u.protocol}`;
  if (u.username !== "" || u.password !== "") return "credentials in the URL are not sent";
  const hostname = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
  const port = u.port === "" ? (secure ? 443 : 80) : Number(u.port);
  const address = IPV4.test(hostname) || hostname.includes(":");
  const name = serverName ?? (secure && !address ? hostname : undefined);
  const tls: TLSOptions | null = secure
    ? {
        rejectUnauthorized: true,
        ...(name === undefined ? {} : { serverName: name }),
        ...(ca === undefined ? {} : { ca }),
      }
    : null;
  return {
    key: `${secure ? "https" : "http"} ${hostname} ${port} ${name ?? ""}`,
    hostname,
    port,
    tls,
    path: u.pathname + u.search,
    host: u.host,
  };
}

/** What a header name is to requestHead: a line sent as given, the Host, or one it writes itself. */
const LINE = 0;
const HOST = 1;
const OWN = 2;
/** Each header name's kind, checked and lowered once per name (a send gives the same few names). */
const nameKinds = new Map<string, number>();

function nameKind(name: string): number {
  let kind = nameKinds.get(name);
  if (kind === undefined) {
    // Not quoted: a name with a CR or LF in it is nothing to log.
    if (!TOKEN.test(name)) throw new TypeError("invalid header name");
    const lower = name.toLowerCase();
    kind = lower === "host" ? HOST : lower === "content-length" || lower === "transfer-encoding" ? OWN : LINE;
    if (nameKinds.size >= TARGETS) nameKinds.clear();
    nameKinds.set(name, kind);
  }
  return kind;
}

/** The request line and headers (ASCII only, checked: a CR, LF or NUL would split the request). */
function requestHead(target: Target, headers: Record<string, string>, bodyBytes: number): string {
  let host = target.host;
  let lines = "";
  for (const name in headers) {
    const value = headers[name] as string;
    const kind = nameKind(name);
    if (!FIELD_VALUE.test(value)) throw new TypeError(`invalid value for header ${name}`);
    if (kind === HOST) host = value;
    else if (kind === LINE) lines += `${name}: ${value}\r\n`;
  }
  return `POST ${target.path} HTTP/1.1\r\nhost: ${host}\r\n${lines}content-length: ${bodyBytes}\r\n\r\n`;
}

function answerOf(parser: AnswerParser): Http1Answer {
  const prefix = parser.prefix();
  return {
    statusCode: parser.statusCode,
    responsePrefix: prefix === null ? null : decoder.decode(prefix),
    retryAfter: parser.retryAfter,
    failure: null,
  };
}

function failed(name: string | undefined, code: string | undefined, message: string): Http1Answer {
  return { statusCode: null, responsePrefix: null, retryAfter: null, failure: { name, code, message } };
}
