// The regular-expression engine of payload schemas' `pattern` and `patternProperties` (DESIGN
// §9): RE2 semantics on re2js, a pure-JavaScript port of RE2 whose matching time is linear in
// the input whatever the pattern. JavaScript's own RegExp backtracks: `^(a|a)+$` takes time
// doubling with every character of a non-matching string, so one event could stall the process.
// re2js has no native part, so it runs under Bun, Deno and the compiled executable alike.
// Patterns RE2 cannot run (lookaround, backreferences) are refused at registration.
import { fullFormats } from "ajv-formats/dist/formats.js";
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

/** A format check on the linear-time engine (flags: i, m as in JavaScript). */
function linearFormat(source: string, flags: string) {
  const compiled = RE2JS.compile(
    RE2JS.translateRegExp(source),
    (flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0) | (flags.includes("m") ? RE2JS.MULTILINE : 0),
  );
  return { type: "string" as const, validate: (text: string) => compiled.test(text) };
}

// ajv-formats' `uri` (its URI regular expression, MIT; not exported by the package), which its
// own RegExp takes ~0.8 s to refuse on 64 KiB.
const URI = String.raw`^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$`;

/** The longest string the `url` format accepts. */
export const MAX_URL_LENGTH = 2048;

/**
 * ajv-formats' formats whose regular expressions RE2 can run, on the linear-time engine: the
 * same expressions, so the same strings pass. JavaScript's RegExp took up to 0.9 s on a 64 KiB
 * string for `uri` and `uri-reference`. `url` accepts at most MAX_URL_LENGTH characters.
 * The others (date, time, duration, hostname…: lookahead or code) stay as ajv-formats has them:
 * each refuses a hostile 64 KiB string in milliseconds (test/http/linear-patterns.test.ts times
 * every format).
 */
export function linearFormats(): Record<string, { type: "string"; validate: (text: string) => boolean }> {
  const formats: Record<string, { type: "string"; validate: (text: string) => boolean }> = {};
  for (const [name, format] of Object.entries(fullFormats)) {
    if (!(format instanceof RegExp) || regExpRefusal(format.source) !== null) continue;
    formats[name] = linearFormat(format.source, format.flags);
  }
  const uri = linearFormat(URI, "i");
  formats.uri = { type: "string", validate: (text) => /\/|:/.test(text) && uri.validate(text) };
  // `url` has lookaheads RE2 cannot run, and JavaScript's RegExp refuses some strings in time
  // quadratic in their length (10 s for 64 KiB): a URL is at most 2048 characters here.
  const url = fullFormats.url as RegExp;
  formats.url = { type: "string", validate: (text) => text.length <= MAX_URL_LENGTH && url.test(text) };
  // ajv-formats' `byte` (is-base64), with its flags: `m` lets one line of base64 pass.
  formats.byte = linearFormat("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$", "m");
  return formats;
}
