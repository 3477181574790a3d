// Event-type patterns of an endpoint (DESIGN §3): an exact type, `prefix.*` (any type under
// that prefix, one or more segments deeper), or `*` (everything). No pattern = everything.

export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*$/;
export const TYPE_PATTERN_PATTERN = /^(\*|[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*(\.\*)?)$/;

export function matchesEventType(patterns: readonly string[], type: string): boolean {
  if (patterns.length === 0) return true;
  return patterns.some((pattern) => {
    if (pattern === "*") return true;
    if (pattern.endsWith(".*")) return type.startsWith(pattern.slice(0, -1));
    return pattern === type;
  });
}
