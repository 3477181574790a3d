// Reads one HTTP/1.1 answer from the bytes of a connection (http1-client.ts), as they arrive:
// the status line, the headers a webhook send uses (content-length, transfer-encoding,
// connection, retry-after), interim 1xx answers skipped, and a body framed by content-length,
// `chunked` (its trailers read and ignored) or the end of the connection. Of the body only the
// first `prefixLimit` bytes are kept (the attempt's responsePrefix); the rest is counted, not
// stored. Every limit is a bound on memory: the head and each chunk-size or trailer line have one.
// Never throws: a malformed answer sets `error`.

/** Status line and headers of one answer (and of each interim answer) at most. */
export const HEAD_LIMIT = 64 * 1024;
/** A chunk-size line, and the trailers in all. */
const LINE_LIMIT = 4 * 1024;
const TRAILERS_LIMIT = 16 * 1024;

const HEAD = 0;
const LENGTH = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_END = 4;
const TRAILERS = 5;
const UNTIL_CLOSE = 6;
const DONE = 7;
const FAILED = 8;

const STATUS_CODE = /^[1-9]\d\d$/;
const DIGITS = /^\d{1,15}$/;
const HEX = /^[0-9A-Fa-f]{1,12}$/;

export class AnswerParser {
  statusCode = 0;
  retryAfter: string | null = null;
  /** Whether the connection may carry another exchange after this answer. */
  keepAlive = true;
  /** Body bytes seen so far (kept or not). */
  bodyBytes = 0;
  /** What is known to be left of the body: its exact size (content-length), else -1. */
  bodyLeft = -1;
  /** Why the answer cannot be read, once it cannot. */
  error: string | null = null;
  #state = HEAD;
  /** Head bytes of an answer split across reads (a copy, at most HEAD_LIMIT). */
  #pending: Buffer | null = null;
  /** A chunk-size or trailer line split across reads. */
  #line = "";
  #trailerBytes = 0;
  /** Where #lineFrom stopped. */
  #next = 0;
  #crSeen = false;
  #prefix: Buffer | null = null;
  #prefixLength = 0;
  readonly #prefixLimit: number;

  constructor(prefixLimit: number) {
    this.#prefixLimit = prefixLimit;
  }

  /** The status line and headers of the final answer have been read. */
  get headRead(): boolean {
    return this.#state !== HEAD && this.statusCode >= 200;
  }

  /** The whole answer has been read (the connection is at its end, or at the next answer). */
  get done(): boolean {
    return this.#state === DONE;
  }

  /** As much of the body as is kept has arrived (or the body is complete). */
  get prefixComplete(): boolean {
    return this.#state === DONE || (this.headRead && this.#prefixLength >= this.#prefixLimit);
  }

  /** Whether the answer's end is delimited by the connection's close. */
  get untilClose(): boolean {
    return this.#state === UNTIL_CLOSE;
  }

  /** The kept prefix of the body (null when empty). */
  prefix(): Uint8Array | null {
    return this.#prefix === null || this.#prefixLength === 0
      ? null
      : this.#prefix.subarray(0, this.#prefixLength);
  }

  /**
   * Reads bytes from `start`; returns where it stopped: at the end of `bytes`, or right after the
   * end of the answer (bytes beyond it belong to no exchange), or where it failed (`error`).
   */
  feed(bytes: Buffer, start = 0): number {
    let at = start;
    const end = bytes.length;
    while (at < end) {
      switch (this.#state) {
        case HEAD:
          at = this.#head(bytes, at);
          break;
        case LENGTH:
        case CHUNK_DATA: {
          // A body of known size, or a chunk's data: bodyLeft bytes.
          const n = Math.min(this.bodyLeft, end - at);
          this.#keep(bytes, at, n);
          at += n;
          this.bodyLeft -= n;
          if (this.bodyLeft > 0) break;
          if (this.#state === LENGTH) this.#state = DONE;
          else {
            this.bodyLeft = -1;
            this.#state = CHUNK_END;
          }
          break;
        }
        case CHUNK_SIZE:
          at = this.#chunkSize(bytes, at);
          break;
        case CHUNK_END: {
          // The CRLF after a chunk's data (a bare LF is accepted, as for every line here).
          const byte = bytes[at++];
          if (byte === 13 && !this.#crSeen) this.#crSeen = true;
          else if (byte === 10) {
            this.#crSeen = false;
            this.#state = CHUNK_SIZE;
          } else return this.#fail("a chunk longer than its size", at - 1);
          break;
        }
        case TRAILERS:
          at = this.#trailers(bytes, at);
          break;
        case UNTIL_CLOSE:
          this.#keep(bytes, at, end - at);
          at = end;
          break;
        default:
          // DONE or FAILED: not this answer's bytes.
          return at;
      }
    }
    return at;
  }

  /** The connection closed: a body delimited by it is complete; otherwise the answer is cut short. */
  closed(): void {
    if (this.#state === UNTIL_CLOSE) this.#state = DONE;
  }

  #fail(why: string, at: number): number {
    this.error = why;
    this.#state = FAILED;
    this.#pending = null;
    return at;
  }

  #keep(bytes: Buffer, at: number, n: number): void {
    this.bodyBytes += n;
    const room = this.#prefixLimit - this.#prefixLength;
    if (room <= 0 || n === 0) return;
    // As large as the body when it is known to be smaller (most answers are a few bytes): the
    // first bytes kept come with the whole of bodyLeft still to come.
    this.#prefix ??= Buffer.allocUnsafe(
      this.#state === LENGTH ? Math.min(this.#prefixLimit, this.bodyLeft) : this.#prefixLimit,
    );
    const take = Math.min(room, n);
    bytes.copy(this.#prefix, this.#prefixLength, at, at + take);
    this.#prefixLength += take;
  }

  #head(bytes: Buffer, at: number): number {
    let data = bytes;
    let from = at;
    let searchFrom = at;
    const pending = this.#pending;
    if (pending !== null) {
      data = Buffer.concat([pending, bytes.subarray(at)]);
      from = 0;
      // The blank line may begin in the pending bytes.
      searchFrom = Math.max(0, pending.length - 3);
    }
    const [headEnd, next] = headBoundary(data, searchFrom);
    if (headEnd < 0) {
      if (data.length - from > HEAD_LIMIT) return this.#fail("answer head too large", bytes.length);
      this.#pending = Buffer.from(data.subarray(from));
      return bytes.length;
    }
    this.#pending = null;
    if (headEnd - from > HEAD_LIMIT) return this.#fail("answer head too large", bytes.length);
    // Where the head ended in `bytes` (its position in the concatenation, less what was pending).
    const after = pending === null ? next : at + next - pending.length;
    this.#readHead(data.toString("latin1", from, headEnd));
    return after;
  }

  /** Reads a head (without its blank line); `error` says when it failed. */
  #readHead(text: string): void {
    // The status line: HTTP/1.x, a space, three digits, then the end or a space or tab.
    let lineEnd = text.indexOf("\n");
    const statusEnd = lineEnd < 0 ? text.length : lineEnd;
    const after = text.charCodeAt(12);
    if (
      !text.startsWith("HTTP/1.") ||
      (text.charCodeAt(7) !== 48 && text.charCodeAt(7) !== 49) ||
      text.charCodeAt(8) !== 32 ||
      !(statusEnd === 12 || after === 32 || after === 9 || (after === 13 && statusEnd === 13)) ||
      !STATUS_CODE.test(text.slice(9, 12))
    ) {
      this.#fail("malformed status line", 0);
      return;
    }
    const minor = text.charCodeAt(7) - 48;
    const code = Number(text.slice(9, 12));
    let length: string | null = null;
    let transfer: string | null = null;
    let connection: string | null = null;
    let retryAfter: string | null = null;
    // Header lines, by index: only the four names read here are sliced out.
    while (lineEnd >= 0) {
      const start = lineEnd + 1;
      lineEnd = text.indexOf("\n", start);
      const end = lineEnd < 0 ? text.length : lineEnd;
      const first = text.charCodeAt(start);
      // An obsolete folded continuation line: part of the header above; none this reads folds.
      if (first === 32 || first === 9) continue;
      const colon = text.indexOf(":", start);
      if (colon <= start || colon > end) {
        this.#fail("malformed header line", 0);
        return;
      }
      // Only the names this reads are lowered (their lengths: 14, 17, 10, 11).
      const size = colon - start;
      if (size !== 14 && size !== 17 && size !== 10 && size !== 11) continue;
      const name = text.slice(start, colon).toLowerCase();
      if (
        name !== "content-length" &&
        name !== "transfer-encoding" &&
        name !== "connection" &&
        name !== "retry-after"
      )
        continue;
      // trim() drops the CR of a CRLF line too.
      const value = text.slice(colon + 1, end).trim();
      if (name === "content-length") length = listed(length, value);
      else if (name === "transfer-encoding") transfer = listed(transfer, value);
      else if (name === "connection") connection = listed(connection, value);
      else retryAfter = listed(retryAfter, value);
    }
    if (code < 200) {
      // 101 switches protocols, which a POST of ours never asks for; other 1xx are interim.
      if (code === 101) {
        this.#fail("unexpected 101 Switching Protocols", 0);
        return;
      }
      return;
    }
    this.statusCode = code;
    this.retryAfter = retryAfter;
    const tokens = connection?.toLowerCase() ?? "";
    this.keepAlive = minor === 1 ? !hasToken(tokens, "close") : hasToken(tokens, "keep-alive");
    if (code === 204 || code === 304) {
      this.#state = DONE;
      return;
    }
    if (transfer !== null) {
      // RFC 9112 6.3: chunked when it is the last coding; any other coding runs until close.
      const codings = transfer.toLowerCase().split(",");
      if (codings[codings.length - 1]?.trim() === "chunked") this.#state = CHUNK_SIZE;
      else {
        this.#state = UNTIL_CLOSE;
        this.keepAlive = false;
      }
      return;
    }
    if (length !== null) {
      // Repeated (or listed) values must agree (the common single value is not split).
      const values = length.includes(",") ? length.split(",") : null;
      const first = values === null ? length : (values[0]?.trim() ?? "");
      if (!DIGITS.test(first) || values?.some((v) => v.trim() !== first)) {
        this.#fail("malformed content-length", 0);
        return;
      }
      this.bodyLeft = Number(first);
      this.#state = this.bodyLeft === 0 ? DONE : LENGTH;
      return;
    }
    this.#state = UNTIL_CLOSE;
    this.keepAlive = false;
  }

  /** A whole line from `at`, joined with what a previous read left; null when it goes on. */
  #lineFrom(bytes: Buffer, at: number): string | null {
    const newline = bytes.indexOf(10, at);
    if (newline < 0) {
      this.#line += bytes.toString("latin1", at);
      this.#next = bytes.length;
      return null;
    }
    const line = trimCr(this.#line + bytes.toString("latin1", at, newline));
    this.#line = "";
    this.#next = newline + 1;
    return line;
  }

  #chunkSize(bytes: Buffer, at: number): number {
    const line = this.#lineFrom(bytes, at);
    const next = this.#next;
    if ((line ?? this.#line).length > LINE_LIMIT) return this.#fail("chunk-size line too long", next);
    if (line === null) return next;
    const semicolon = line.indexOf(";");
    const size = (semicolon < 0 ? line : line.slice(0, semicolon)).trim();
    if (!HEX.test(size)) return this.#fail("malformed chunk size", next);
    const n = Number.parseInt(size, 16);
    if (n === 0) this.#state = TRAILERS;
    else {
      this.bodyLeft = n;
      this.#state = CHUNK_DATA;
    }
    return next;
  }

  #trailers(bytes: Buffer, at: number): number {
    const line = this.#lineFrom(bytes, at);
    const next = this.#next;
    this.#trailerBytes += next - at;
    if (this.#trailerBytes > TRAILERS_LIMIT) return this.#fail("trailers too large", next);
    if (line === "") this.#state = DONE;
    return next;
  }
}

/**
 * Where the blank line that ends a head is in `data` (from `from`): [the end of the head's last
 * line, the first byte after the blank line], or [-1, -1]. CRLF, and bare LF as recipients may
 * accept (RFC 9112 2.2): the first LF followed by LF or CRLF.
 */
function headBoundary(data: Buffer, from: number): [number, number] {
  for (let i = data.indexOf(10, from); i >= 0; i = data.indexOf(10, i + 1)) {
    const next = data[i + 1];
    if (next === 10) return [i, i + 2];
    if (next === 13 && data[i + 2] === 10) return [i, i + 3];
  }
  return [-1, -1];
}

function trimCr(line: string): string {
  return line.length > 0 && line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/** A header's values, repeated lines joined as one list (as `Headers.get` joins them). */
function listed(list: string | null, value: string): string {
  return list === null ? value : `${list}, ${value}`;
}

function hasToken(list: string, token: string): boolean {
  if (list.length === 0) return false;
  for (const t of list.split(",")) if (t.trim() === token) return true;
  return false;
}
