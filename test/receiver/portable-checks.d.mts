// Types for portable-checks.mjs, which stays plain JavaScript so that Deno and Node.js run it as is.
import type * as Snippet from "../../src/receiver/verify.ts";

export type SnippetModule = typeof Snippet;
export const SECRET: string;
export const OTHER_SECRET: string;
export const ID: string;
export const TIMESTAMP: number;
export const NOW: number;
export const EVENT: Snippet.OutboxEvent;
export const BODY: string;
export const KNOWN_SIGNATURE: string;
export function sign(secret: string, id: string, timestamp: number, body: string): Promise<string>;
export const checks: [name: string, check: (snippet: SnippetModule) => Promise<void>][];
export function runChecks(snippet: SnippetModule, runtime: string): Promise<boolean>;
