// The send worker's entry point (send-worker.ts starts it on a Bun Worker; scripts/build.ts
// builds it into the executable beside src/main.ts). It makes the exchanges it is posted with
// exchange.ts makeExchange, the one copy of the exchange rule, and posts their results back in
// batches: [n, result, n, result, …] as JSON text (cheaper for both threads than a structured
// clone: send-worker.ts), at most one message per turn of its event loop. Its first message is
// not a batch but the settings its exchanges follow (the webhook client).
import {
  type Exchange,
  type ExchangeResult,
  makeExchange,
  useWebhookClient,
  type WebhookClient,
} from "./exchange.ts";

/** The worker's side of its port (a Worker's global scope). */
const port = globalThis as unknown as {
  onmessage: ((event: MessageEvent<string>) => void) | null;
  postMessage(message: string): void;
};

let results: unknown[] = [];

function answer(n: number, result: ExchangeResult): void {
  results.push(n, result);
  if (results.length > 2) return;
  setImmediate(() => {
    const batch = results;
    results = [];
    port.postMessage(JSON.stringify(batch));
  });
}

port.onmessage = (event) => {
  const jobs = JSON.parse(event.data) as unknown[] | { webhookClient: WebhookClient };
  if (!Array.isArray(jobs)) {
    // The first message: the settings of the thread that started this one (send-worker.ts).
    useWebhookClient(jobs.webhookClient);
    return;
  }
  for (let i = 0; i < jobs.length; i += 2) {
    const n = jobs[i] as number;
    void makeExchange(jobs[i + 1] as Exchange).then((result) => answer(n, result));
  }
};
