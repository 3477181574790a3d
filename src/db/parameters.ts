// Binding `:name` parameters by position: the engine driver reads a statement's parameter order
// from its text once (an array binds faster than an object looked up by name), and the VALUES
// lists (deliveries/rows.ts) give their statements positional values made the same way.

/**
 * The names of a statement's `:name` parameters in the order SQLite numbers them (first
 * appearance), or null when the text has anything that could make that reading wrong. Quoted
 * strings and identifiers ('…', "…", `…`) are stepped over (a `:` inside one is no parameter);
 * outside them, a comment or another parameter form (`?`, `@`, `$`) or a [bracketed] identifier
 * gives null (named binding only).
 */
export function parameterOrder(sql: string): string[] | null {
  const names: string[] = [];
  for (const match of sql.matchAll(QUOTED_OR_PARAMETER)) {
    if (match[1] !== undefined) return null;
    const name = match[2];
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}

const QUOTED_OR_PARAMETER =
  /'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|(--|\/\*|[?@$[])|:([A-Za-z_][A-Za-z0-9_]*)/g;
