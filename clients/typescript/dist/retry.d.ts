export interface RetryOptions {
    /** Tries in all, the first included (default 5). */
    attempts?: number;
    /** First backoff; doubles per retry, with jitter (default 200 ms). */
    baseDelayMs?: number;
    /** Longest wait, Retry-After included (default 30 s). */
    maxDelayMs?: number;
}
export declare const RETRY_DEFAULTS: Required<RetryOptions>;
/** Whether an answer with this status and problem type may be retried with the same key. */
export declare function retryableStatus(status: number, type: string | undefined): boolean;
/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date), or null. */
export declare function retryAfterMs(header: string | null, now?: number): number | null;
/** The wait before retry number `retry` (1 = the first retry): Retry-After if given, else backoff. */
export declare function retryDelay(retry: number, retryAfter: number | null, options: Required<RetryOptions>): number;
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
