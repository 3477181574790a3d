// Durations as DESIGN §3 writes them: `^\d+(ms|s|m|h|d)$`, e.g. "30s", "24h".
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const DURATION_PATTERN = /^(\d+)(ms|s|m|h|d)$/;

/** Milliseconds for a duration string, or null when it is not one. */
export function parseDuration(text: string): number | null {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : null;
}
