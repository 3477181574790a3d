/** The clock every component reads; tests inject their own to move time without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

// The last two answers of iso(), kept: the commits of a group commit mostly share their
// millisecond, and their events' default deadline with it (two times, asked for in turn), and
// each commit writes both twice, in its response and in its ledger entry.
const memoMs = [Number.NaN, Number.NaN];
const memoText = ["", ""];
let replace = 0;

export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  if (ms == null) return null;
  if (ms === memoMs[0]) return memoText[0] as string;
  if (ms === memoMs[1]) return memoText[1] as string;
  const text = new Date(ms).toISOString();
  memoMs[replace] = ms;
  memoText[replace] = text;
  replace ^= 1;
  return text;
}
