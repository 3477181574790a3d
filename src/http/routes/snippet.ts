// GET /snippet/verify.ts and /snippet/verify.js (public): the receiver snippet exactly as this
// outboxd speaks it, embedded in the program at build time.
// Text imports (Bun and Deno both embed the file's text, also in a compiled executable);
// TypeScript does not model them and sees the modules' exports instead, hence the directives.
// @ts-expect-error TS1192: a text import has a default export, the string.
import verifyJs from "../../receiver/verify.js" with { type: "text" };
// @ts-expect-error TS1192: a text import has a default export, the string.
import verifyTs from "../../receiver/verify.ts" with { type: "text" };
import type { App } from "../context.ts";

export function snippetRoutes(app: App): void {
  const serve = (source: unknown, type: string) => () =>
    new Response(String(source), {
      headers: { "content-type": `${type}; charset=utf-8`, "cache-control": "no-cache" },
    });
  app.get("/snippet/verify.ts", serve(verifyTs, "text/typescript"));
  app.get("/snippet/verify.js", serve(verifyJs, "text/javascript"));
}
