/** The clock every component reads; tests inject their own to move time without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}
