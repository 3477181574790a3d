// When and how long to wait before sending the same commit again. Only answers that cannot have
// committed anything, or that a retry with the same Idempotency-Key makes safe, are retried:
// network errors (the request may or may not have arrived: the key makes a second one harmless),
// 429 and 503 (honouring Retry-After), and 409 idempotency-in-progress (the first is still running).
export const RETRY_DEFAULTS = { attempts: 5, baseDelayMs: 200, maxDelayMs: 30_000 };
/** Whether an answer with this status and problem type may be retried with the same key. */
export function retryableStatus(status, type) {
    if (status === 429 || status === 503)
        return true;
    return status === 409 && (type ?? "").endsWith("idempotency-in-progress");
}
/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(header, now = Date.now()) {
    if (header === null)
        return null;
    const text = header.trim();
    if (/^\d+$/.test(text))
        return Number(text) * 1000;
    const at = Date.parse(text);
    return Number.isNaN(at) ? null : Math.max(0, at - now);
}
/** The wait before retry number `retry` (1 = the first retry): Retry-After if given, else backoff. */
export function retryDelay(retry, retryAfter, options) {
    const backoff = options.baseDelayMs * 2 ** (retry - 1);
    const jittered = backoff / 2 + Math.random() * (backoff / 2);
    return Math.min(options.maxDelayMs, retryAfter ?? jittered);
}
export function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted)
            return reject(signal.reason);
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", abort);
            resolve();
        }, ms);
        const abort = () => {
            clearTimeout(timer);
            reject(signal?.reason);
        };
        signal?.addEventListener("abort", abort, { once: true });
    });
}
