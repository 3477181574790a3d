// The regular-expression engine of payload schemas' `pattern` and `patternProperties` (DESIGN
// §17): RE2 semantics on re2js, a pure-JavaScript port of RE2 whose matching time is linear in
// the input whatever the pattern. JavaScript's own RegExp backtracks: `^(a|a)+$` takes time
// doubling with every character of a non-matching string, so one event could stall the process.
// re2js has no native part, so it runs under Bun, Deno and the compiled executable alike.
// Patterns RE2 cannot run (lookaround, backreferences) are refused at registration.
import { RE2JS } from "re2js";

/** ajv's RegExpEngine: `pattern` is an ECMA-262 pattern as JSON Schema writes it. */
export function linearRegExp(
  pattern: string,
  _flags: string,
): { test(text: string): boolean; toString(): string } {
  const compiled = compile(pattern);
  // ajv keys its compiled patterns by toString(): each must name its own pattern.
  return { test: (text) => compiled.test(text), toString: () => `re2:${pattern}` };
}
// ajv prints this only in standalone code, which outboxd does not generate.
linearRegExp.code = "linearRegExp";

function compile(pattern: string): RE2JS {
  // \uXXXX, \cX, `/` and named groups are spelled differently in RE2's syntax.
  return RE2JS.compile(RE2JS.translateRegExp(pattern));
}

/** Why the engine cannot run this pattern, or null when it can. */
export function regExpRefusal(pattern: string): string | null {
  try {
    compile(pattern);
    return null;
  } catch (error) {
    // The rule only (`invalid or unsupported Perl syntax`), not the piece of pattern it quotes.
    const message = error instanceof Error ? error.message : "";
    const rule =
      message
        .replace(/^error parsing regexp: /, "")
        .split(":")[0]
        ?.slice(0, 100) || "not RE2 syntax";
    return `is a pattern the linear-time engine (RE2 syntax: no lookaround or backreferences) cannot run: ${rule}`;
  }
}
