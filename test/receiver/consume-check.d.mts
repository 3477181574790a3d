// Types for consume-check.mjs, which stays plain JavaScript so that Deno and Node.js run it as is.
import type { SnippetModule } from "./portable-checks.mjs";

export function checkConsume(
  snippet: SnippetModule,
  server: { url: string; adminToken: string },
): Promise<void>;
