// Run under Deno by pinned-post.test.ts: each case in PINNED_CASES (JSON) through pinnedPost
// (src/dispatch/pinned-post.ts); prints what each returned or threw, as one JSON line.
import process from "node:process";
import { pinnedPost } from "../../src/dispatch/pinned-post.ts";

interface Case {
  url: string;
  address: string;
  timeoutMs?: number;
}

const results: unknown[] = [];
for (const c of JSON.parse(process.env.PINNED_CASES ?? "[]") as Case[]) {
  try {
    const answer = await pinnedPost({
      url: new URL(c.url),
      address: c.address,
      // The Host the sender would set for fetch: the request's own URL names the host here.
      headers: { "content-type": "application/json", host: "not-this.example" },
      body: '{"a":1}',
      timeoutMs: c.timeoutMs ?? 10_000,
      prefixBytes: 1024,
    });
    results.push({ answer });
  } catch (error) {
    const e = error as Error;
    results.push({ error: { name: e.name, message: String(e.message).slice(0, 300) } });
  }
}
console.log(JSON.stringify(results));
