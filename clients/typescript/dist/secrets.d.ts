/** Throws a TypeError naming `what` (never its value) unless `value` is non-empty printable ASCII. */
export declare function checkHeaderValue(what: string, value: string): void;
/** `text` with every one of `secrets` (and its first line, as a fetch may quote only that) replaced. */
export declare function redact(text: string, secrets: readonly string[]): string;
/**
 * A copy of an error thrown while sending, for `cause`: its name, `code` and message with the
 * secrets cut out, and its own cause the same way (a few levels deep). Never the error itself,
 * whose message may quote a header value.
 */
export declare function redactedError(error: unknown, secrets: readonly string[], depth?: number): Error;
