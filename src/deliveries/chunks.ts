// The one chunked loop of the module (replay, expiry, retention; HTTP, CLI and the sweep):
// a large change is made as a series of short write transactions, so it never holds the single
// writer long and commits queued behind it keep flowing. River's job cleaner stops the same
// way: when a pass changes fewer rows than its limit, nothing is left.
import type { NamedWrite, Writes } from "../db/writer-ops.ts";

/** What one chunk changed, by kind (e.g. { deliveries, attempts, commits }). */
export type Counts = Record<string, number>;

export interface Chunked {
  /**
   * false for bookkeeping whose loss on power failure is harmless (the sweep's expiry and
   * retention are simply done again); see Writer.write.
   */
  durable?: boolean;
  /** Called after every chunk with the running totals (progress bars). */
  onChunk?: (total: Counts) => void;
}

/**
 * Writes `chunk(limit)` as separate writes until a chunk changes fewer than `limit` rows of every
 * kind, and returns the totals.
 */
export async function inChunks<T extends Counts>(
  writes: Pick<Writes, "write">,
  chunk: (limit: number) => NamedWrite<T>,
  options: Chunked & { limit: number },
): Promise<T> {
  const { limit, durable = true, onChunk } = options;
  let total: T | undefined;
  for (;;) {
    const counts = await writes.write(chunk(limit), { durable });
    total = add(total, counts);
    onChunk?.(total);
    if (Object.values(counts).every((n) => n < limit)) return total;
  }
}

function add<T extends Counts>(total: T | undefined, counts: T): T {
  if (total === undefined) return { ...counts };
  const sum: Counts = { ...total };
  for (const [key, n] of Object.entries(counts)) sum[key] = (sum[key] ?? 0) + n;
  return sum as T;
}
