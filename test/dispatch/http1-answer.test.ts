// The native webhook client's answer reader (src/dispatch/http1-answer.ts), fed bytes as a
// connection would give them: whole, split at every position, one byte at a time, and several
// answers in one read.
import { describe, expect, test } from "bun:test";
import { AnswerParser, HEAD_LIMIT } from "../../src/dispatch/http1-answer.ts";

const PREFIX = 16;

interface Read {
  status: number;
  retryAfter: string | null;
  keepAlive: boolean;
  prefix: string | null;
  done: boolean;
  error: string | null;
  /** Where the answer ended in the bytes (the rest is not its own). */
  end: number;
}

/** Feeds `pieces` one after the other; `closed` ends the connection after them. */
function read(pieces: Buffer[], closed = false): Read {
  const parser = new AnswerParser(PREFIX);
  let offset = 0;
  let end = -1;
  for (const piece of pieces) {
    const at = parser.feed(piece);
    if (end < 0 && (parser.done || parser.error !== null)) end = offset + at;
    offset += piece.length;
    if (parser.done || parser.error !== null) break;
  }
  if (closed) parser.closed();
  const prefix = parser.prefix();
  return {
    status: parser.statusCode,
    retryAfter: parser.retryAfter,
    keepAlive: parser.keepAlive,
    prefix: prefix === null ? null : Buffer.from(prefix).toString("latin1"),
    done: parser.done,
    error: parser.error,
    end: end < 0 ? offset : end,
  };
}

const whole = (text: string, closed = false) => read([Buffer.from(text, "latin1")], closed);

/** The same answer split in two at every position, and byte by byte: always the same reading. */
function everySplit(text: string, closed = false): Read {
  const bytes = Buffer.from(text, "latin1");
  const once = read([bytes], closed);
  for (let cut = 1; cut < bytes.length; cut++)
    expect(read([bytes.subarray(0, cut), bytes.subarray(cut)], closed)).toEqual(once);
  expect(
    read(
      [...bytes].map((b) => Buffer.from([b])),
      closed,
    ),
  ).toEqual(once);
  return once;
}

describe("answer reader", () => {
  test("content-length: status, Retry-After (any case), the body's prefix; split anywhere", () => {
    const text = "HTTP/1.1 429 Too Many\r\nRETRY-AFTER: 30\r\nContent-Length: 5\r\nX-A: b\r\n\r\nslow!";
    expect(everySplit(text)).toEqual({
      status: 429,
      retryAfter: "30",
      keepAlive: true,
      prefix: "slow!",
      done: true,
      error: null,
      end: text.length,
    });
  });

  test("only the first bytes of a body are kept; the rest is counted", () => {
    const body = "x".repeat(40);
    const parser = new AnswerParser(PREFIX);
    parser.feed(Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: 40\r\n\r\n${body}`));
    expect(parser.done).toBe(true);
    expect(Buffer.from(parser.prefix() as Uint8Array).toString()).toBe("x".repeat(PREFIX));
    expect(parser.bodyBytes).toBe(40);
  });

  test("chunked, with extensions and trailers; split anywhere", () => {
    const text =
      "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n" +
      "5;ext=1\r\nhello\r\n6\r\n world\r\nA\r\n0123456789\r\n0\r\nx-checksum: 1\r\nx-more: 2\r\n\r\n";
    expect(everySplit(text)).toEqual({
      status: 200,
      retryAfter: null,
      keepAlive: true,
      prefix: "hello world01234",
      done: true,
      error: null,
      end: text.length,
    });
  });

  test("a body without length ends with the connection (and the connection is not kept)", () => {
    const text = "HTTP/1.1 500 Oops\r\ncontent-type: text/plain\r\n\r\npartial bo";
    const open = whole(text);
    expect(open.done).toBe(false);
    expect(everySplit(text, true)).toMatchObject({
      status: 500,
      prefix: "partial bo",
      done: true,
      keepAlive: false,
    });
  });

  test("1xx answers are skipped, in the same read as the answer or not", () => {
    const text =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\nretry-after: 9\r\n\r\n" +
      "HTTP/1.1 202 Accepted\r\ncontent-length: 2\r\n\r\nok";
    expect(everySplit(text)).toMatchObject({ status: 202, retryAfter: null, prefix: "ok", done: true });
  });

  test("two answers in one read: the first ends where it ends", () => {
    const first = "HTTP/1.1 204 No Content\r\n\r\n";
    const text = `${first}HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n`;
    expect(whole(text)).toMatchObject({ status: 204, done: true, end: first.length });
    const withBody = "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc";
    expect(whole(`${withBody}HTTP/1.1 500 X\r\n\r\n`)).toMatchObject({
      status: 200,
      prefix: "abc",
      end: withBody.length,
    });
  });

  test("204 and 304 have no body whatever they say; content-length 0 is an empty body", () => {
    expect(whole("HTTP/1.1 204 No Content\r\ncontent-length: 10\r\n\r\n")).toMatchObject({
      done: true,
      prefix: null,
    });
    expect(whole("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")).toMatchObject({ done: true, prefix: null });
  });

  test("connection: close, and HTTP/1.0 without keep-alive, are not kept", () => {
    expect(whole("HTTP/1.1 200 OK\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n").keepAlive).toBe(false);
    expect(whole("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n").keepAlive).toBe(false);
    expect(whole("HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n").keepAlive).toBe(
      true,
    );
    expect(
      whole("HTTP/1.1 200 OK\r\nconnection: upgrade, keep-alive\r\ncontent-length: 0\r\n\r\n").keepAlive,
    ).toBe(true);
  });

  test("bare LF line ends are read as CRLF ones", () => {
    expect(everySplit("HTTP/1.1 201 Created\nretry-after: 5\ncontent-length: 2\n\nok")).toMatchObject({
      status: 201,
      retryAfter: "5",
      prefix: "ok",
      done: true,
    });
  });

  test("repeated Retry-After headers are joined as fetch joins them", () => {
    expect(
      whole("HTTP/1.1 503 X\r\nretry-after: 1\r\nRetry-After: 2\r\ncontent-length: 0\r\n\r\n").retryAfter,
    ).toBe("1, 2");
  });

  test("malformed answers are errors, never throws", () => {
    const bad = [
      "SSH-2.0-OpenSSH_9.6\r\n\r\n",
      "HTTP/2 200\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
      "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcdef\r\n",
      "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n",
    ];
    for (const text of bad) {
      const reading = whole(text);
      expect(reading.error, text).not.toBeNull();
      expect(reading.done).toBe(false);
    }
    // Agreeing repeats are fine.
    expect(whole("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nContent-Length: 2\r\n\r\nok").prefix).toBe("ok");
  });

  test("a head, a chunk-size line or trailers without end are bounded, not buffered", () => {
    const parser = new AnswerParser(PREFIX);
    parser.feed(Buffer.from("HTTP/1.1 200 OK\r\n"));
    const filler = Buffer.from(`x-filler: ${"a".repeat(1000)}\r\n`);
    for (let i = 0; i < HEAD_LIMIT / filler.length + 2 && parser.error === null; i++) parser.feed(filler);
    expect(parser.error).toBe("answer head too large");

    const chunked = new AnswerParser(PREFIX);
    chunked.feed(Buffer.from("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"));
    for (let i = 0; i < 10 && chunked.error === null; i++) chunked.feed(Buffer.from("0".repeat(1000)));
    expect(chunked.error).not.toBeNull();

    const trailers = new AnswerParser(PREFIX);
    trailers.feed(Buffer.from("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n"));
    for (let i = 0; i < 100 && trailers.error === null; i++) trailers.feed(filler);
    expect(trailers.error).toBe("trailers too large");
  });
});
