// Event-type patterns of an endpoint (DESIGN §3): an exact type, `prefix.*` (any type under
// that prefix, one or more segments deeper), or `*` (everything). No pattern = everything but
// outboxd's own `outboxd.*` events, which only patterns starting with `outboxd.` match (DESIGN §19).

export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*$/;
export const TYPE_PATTERN_PATTERN = /^(\*|[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*(\.\*)?)$/;

export function matchesEventType(patterns: readonly string[], type: string): boolean {
  const own = type.startsWith("outboxd.");
  if (patterns.length === 0) return !own;
  return patterns.some((pattern) => {
    if (own && !pattern.startsWith("outboxd.")) return false;
    if (pattern === "*") return true;
    if (pattern.endsWith(".*")) return type.startsWith(pattern.slice(0, -1));
    return pattern === type;
  });
}

/**
 * Where a list of patterns breaks the limits (DESIGN §3 limits): every commit matches its events
 * against every endpoint's patterns, so their size is bounded (a megabyte of patterns once
 * made every commit 5-10 times slower).
 */
export function patternLimitErrors(
  patterns: readonly string[],
  limits: { maxPatternLength: number; maxPatternsPerEndpoint: number },
  at: string,
): { pointer: string; detail: string }[] {
  const errors: { pointer: string; detail: string }[] = [];
  if (patterns.length > limits.maxPatternsPerEndpoint) {
    errors.push({ pointer: at, detail: `must list at most ${limits.maxPatternsPerEndpoint} patterns` });
  }
  patterns.forEach((pattern, i) => {
    if (pattern.length > limits.maxPatternLength) {
      errors.push({ pointer: `${at}/${i}`, detail: `must be at most ${limits.maxPatternLength} characters` });
    }
  });
  return errors;
}
