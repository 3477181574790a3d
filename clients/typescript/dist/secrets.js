// What the client sends in headers (the token, an Idempotency-Key, a traceparent) never comes
// back in an error: a value that no header can carry is refused before anything is sent, by
// naming the option and never quoting it, and the text of every error the client makes (its
// message, `detail` and `cause`) has these values cut out, whoever wrote that text (a fetch
// implementation that quotes a bad header, a proxy that echoes the request).
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
/** Throws a TypeError naming `what` (never its value) unless `value` is non-empty printable ASCII. */
export function checkHeaderValue(what, value) {
    if (typeof value !== "string" || !PRINTABLE_ASCII.test(value)) {
        throw new TypeError(`@outboxd/client: ${what} must be a non-empty string of printable ASCII characters (its value is not shown)`);
    }
}
/** `text` with every one of `secrets` (and its first line, as a fetch may quote only that) replaced. */
export function redact(text, secrets) {
    let out = text;
    for (const secret of secrets) {
        for (const part of [secret, ...secret.split(/[\r\n\0]/)]) {
            if (part.length >= 4)
                out = out.split(part).join("[redacted]");
        }
    }
    return out;
}
/**
 * A copy of an error thrown while sending, for `cause`: its name, `code` and message with the
 * secrets cut out, and its own cause the same way (a few levels deep). Never the error itself,
 * whose message may quote a header value.
 */
export function redactedError(error, secrets, depth = 0) {
    const source = error instanceof Error ? error : new Error(String(error));
    const copy = new Error(redact(source.message, secrets), source.cause !== undefined && depth < 3
        ? { cause: redactedError(source.cause, secrets, depth + 1) }
        : undefined);
    copy.name = source.name;
    const code = source.code;
    if (typeof code === "string" || typeof code === "number")
        copy.code = code;
    return copy;
}
