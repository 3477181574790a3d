// A loopback TCP proxy in front of a server (a libSQL server, sqld): listens on 127.0.0.1 port 0
// and forwards each connection's bytes both ways, optionally
//  - delayed: each chunk held `delayMs` before it is forwarded, each way (a round trip then costs
//    2 × delayMs more);
//  - cut: once a request the test picks has been forwarded whole and the server has begun to
//    answer it, the client's connection is closed instead of getting that answer (a commit whose
//    answer is lost after the server committed it).
import type { Socket, TCPSocketListener } from "bun";

export interface TcpProxy {
  url: string;
  port: number;
  /**
   * The next request whose bytes (as text, so far on its connection) satisfy `match` reaches the
   * server; its answer is dropped and the client's connection closed. Resolves once it was cut.
   */
  cutAnswerOf(match: (request: string) => boolean): Promise<void>;
  /** Connections accepted so far. */
  connections(): number;
  stop(): void;
}

interface Pair {
  client: Socket<Pair>;
  server: Socket<Pair> | null;
  /** Client bytes not yet written to the server (before it connected, or held by the delay). */
  pending: Uint8Array[];
  /** The request text seen since the server last answered (what `match` is tested on). */
  request: string;
  /** A cut armed on this connection: the server's next answer is dropped, the client closed. */
  cutting: (() => void) | null;
  closed: boolean;
}

export async function startTcpProxy(target: { host: string; port: number }, delayMs = 0): Promise<TcpProxy> {
  let accepted = 0;
  let cut: { match: (request: string) => boolean; done: () => void } | null = null;
  const decoder = new TextDecoder();

  const later = (fn: () => void) => (delayMs > 0 ? setTimeout(fn, delayMs) : fn());
  const close = (pair: Pair) => {
    if (pair.closed) return;
    pair.closed = true;
    pair.client.end();
    pair.server?.end();
  };
  const toServer = (pair: Pair, data: Uint8Array) => {
    if (pair.closed) return;
    if (pair.server) pair.server.write(data);
    else pair.pending.push(data);
  };

  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        accepted += 1;
        const pair: Pair = { client, server: null, pending: [], request: "", cutting: null, closed: false };
        client.data = pair;
        void Bun.connect<Pair>({
          hostname: target.host,
          port: target.port,
          socket: {
            open(server) {
              server.data = pair;
              pair.server = server;
              for (const chunk of pair.pending.splice(0)) server.write(chunk);
            },
            data(_server, data) {
              const bytes = new Uint8Array(data);
              pair.request = "";
              if (pair.cutting) {
                const done = pair.cutting;
                pair.cutting = null;
                close(pair);
                done();
                return;
              }
              later(() => {
                if (!pair.closed) pair.client.write(bytes);
              });
            },
            close() {
              close(pair);
            },
            error() {
              close(pair);
            },
          },
        }).catch(() => close(pair));
      },
      data(client, data) {
        const pair = client.data;
        const bytes = new Uint8Array(data);
        pair.request += decoder.decode(bytes, { stream: true });
        if (cut && !pair.cutting && cut.match(pair.request)) {
          pair.cutting = cut.done;
          cut = null;
        }
        later(() => toServer(pair, bytes));
      },
      close(client) {
        close(client.data);
      },
      error(client) {
        close(client.data);
      },
    },
  });
  return {
    url: `http://127.0.0.1:${listener.port}`,
    port: listener.port,
    cutAnswerOf(match) {
      return new Promise<void>((resolve) => {
        cut = { match, done: resolve };
      });
    },
    connections: () => accepted,
    stop: () => listener.stop(true),
  };
}
