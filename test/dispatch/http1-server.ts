// A raw HTTP/1.1 server on 127.0.0.1, port 0, for the native webhook client's tests
// (http1-client.test.ts): it reads each request off the wire as bytes (what the client really
// sent) and lets the test answer with any bytes at all, in pieces, late, never, or by closing.
import type { Socket, TCPSocketListener } from "bun";

export interface RawRequest {
  /** The request's bytes as they came, head and body (latin1: one char per byte). */
  raw: string;
  head: string;
  body: Buffer;
  /** Which connection it came on (1, 2, … in the order they opened) and its place there (0, 1, …). */
  connection: number;
  index: number;
}

export interface RawConnection {
  id: number;
  socket: Socket<RawConnection>;
  closed: boolean;
  pending: Buffer;
  requests: number;
}

export type Respond = (request: RawRequest, connection: RawConnection) => void;

export interface RawServer {
  url: string;
  port: number;
  requests: RawRequest[];
  connections: RawConnection[];
  respond: Respond;
  stop(): void;
}

/** An answer with a content-length. */
export function answer(status: number, body = "", headers: Record<string, string> = {}): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} X\r\n${lines.join("")}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

export function rawServer(respond: Respond, tls?: { cert: string; key: string }): RawServer {
  const server: RawServer = {
    url: "",
    port: 0,
    requests: [],
    connections: [],
    respond,
    stop: () => {},
  };
  const listener: TCPSocketListener<RawConnection> = Bun.listen<RawConnection>({
    hostname: "127.0.0.1",
    port: 0,
    ...(tls ? { tls } : {}),
    socket: {
      open(socket) {
        const connection: RawConnection = {
          id: server.connections.length + 1,
          socket,
          closed: false,
          pending: Buffer.alloc(0),
          requests: 0,
        };
        socket.data = connection;
        server.connections.push(connection);
      },
      data(socket, bytes) {
        const c = socket.data;
        c.pending = Buffer.concat([c.pending, bytes]);
        for (;;) {
          const headEnd = c.pending.indexOf("\r\n\r\n");
          if (headEnd < 0) return;
          const head = c.pending.toString("latin1", 0, headEnd);
          const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
          const end = headEnd + 4 + length;
          if (c.pending.length < end) return;
          const request: RawRequest = {
            raw: c.pending.toString("latin1", 0, end),
            head,
            body: Buffer.from(c.pending.subarray(headEnd + 4, end)),
            connection: c.id,
            index: c.requests++,
          };
          c.pending = Buffer.from(c.pending.subarray(end));
          server.requests.push(request);
          server.respond(request, c);
        }
      },
      // A TLS connection whose handshake failed never opened: it has no data.
      close(socket) {
        if (socket.data) socket.data.closed = true;
      },
      error(socket) {
        if (socket.data) socket.data.closed = true;
      },
    },
  });
  server.port = listener.port;
  server.url = `${tls ? "https" : "http"}://127.0.0.1:${listener.port}`;
  server.stop = () => {
    listener.stop(true);
    for (const c of server.connections) if (!c.closed) c.socket.terminate();
  };
  return server;
}

/** Writes `text` in pieces of `size` bytes, one per timer turn (so that they arrive as separate reads). */
export async function writeInPieces(
  socket: Socket<RawConnection>,
  text: string,
  size: number,
): Promise<void> {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) {
    socket.write(bytes.subarray(at, at + size));
    socket.flush();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export async function waitUntil(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
