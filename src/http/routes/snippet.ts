// GET /snippet/verify.ts and /snippet/verify.js (public): the receiver snippet exactly as this
// outboxd speaks it, embedded in the program at build time.
// Text imports (Bun and Deno both embed the file's text, also in a compiled executable);
// TypeScript does not model them and sees the modules' exports instead, hence the directives.
// @ts-expect-error TS1192: a text import has a default export, the string.
import verifyJs from "../../receiver/verify.js" with { type: "text" };
// @ts-expect-error TS1192: a text import has a default export, the string.
import verifyTs from "../../receiver/verify.ts" with { type: "text" };
import type { App } from "../context.ts";
import { publicRoute } from "../openapi/route.ts";

export function snippetRoutes(app: App): void {
  const serve = (source: unknown, type: string) => () =>
    new Response(String(source), {
      headers: { "content-type": `${type}; charset=utf-8`, "cache-control": "no-cache" },
    });
  app.get(
    "/snippet/verify.ts",
    publicRoute({
      tag: "Public",
      summary: "The receiver snippet, TypeScript",
      description: "For Bun, Deno, Cloudflare Workers and TypeScript builds.",
      answers: { 200: { description: "TypeScript source.", contentType: "text/typescript" } },
    }),
    serve(verifyTs, "text/typescript"),
  );
  app.get(
    "/snippet/verify.js",
    publicRoute({
      tag: "Public",
      summary: "The receiver snippet, JavaScript",
      description: "The same code as an ES module with JSDoc types, for Node.js 20 and later.",
      answers: { 200: { description: "JavaScript source.", contentType: "text/javascript" } },
    }),
    serve(verifyJs, "text/javascript"),
  );
}
