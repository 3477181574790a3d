// A real webhook receiver on 127.0.0.1, port 0. It records every request (headers and raw
// body) and answers with whatever `respond` decides, so tests can script failures.
export interface Received {
  headers: Headers;
  body: string;
  at: number;
}

export interface TestReceiver {
  url: string;
  received: Received[];
  /** Replace the answer strategy. */
  respond: (request: Received, index: number) => Response | Promise<Response>;
  stop(): Promise<void>;
}

export function startReceiver(
  respond: TestReceiver["respond"] = () => new Response('{"result":"applied"}', { status: 200 }),
): TestReceiver {
  const receiver: TestReceiver = {
    url: "",
    received: [],
    respond,
    stop: async () => {},
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const entry: Received = { headers: request.headers, body: await request.text(), at: Date.now() };
      const index = receiver.received.push(entry) - 1;
      return receiver.respond(entry, index);
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}/hook`;
  receiver.stop = async () => {
    await server.stop(true);
  };
  return receiver;
}

/** Polls `condition` until it holds or `timeoutMs` passes (then throws with `what`). */
export async function waitFor<T>(
  what: string,
  condition: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
