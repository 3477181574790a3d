// One rule for JSON that every reader understands alike (DESIGN §3 limits): a number must
// come back as written and a string must be valid Unicode. JSON.parse silently turns `1e400`
// into Infinity (stored as null), rounds 12345678901234567890 to …7000, and keeps lone
// surrogates (`"\ud800"`) that UTF-8 cannot encode (so "x\ud800", "x\udfff" and "x\ufffd"
// would all be stored as one string), and that no receiver could sign or verify identically.
// Such documents are refused instead: the request layer on the raw text (the only place a
// number's literal is still known), and the canonical JSON of the ledger on values.

/** A path into a JSON document: object keys and array indexes. */
export type JsonPath = (string | number)[];

export interface JsonFault {
  path: JsonPath;
  detail: string;
}

const FAULTS = {
  overflow: "is a number too large for JSON (it would become infinity)",
  underflow: "is a number too small for JSON (it would become 0)",
  unsafeInteger: "is an integer beyond ±2^53 (9007199254740991), which JSON readers round",
  loneSurrogate: "contains a lone surrogate (\\ud800-\\udfff outside a pair), which is not valid Unicode",
  loneSurrogateKey: "has a field name with a lone surrogate (\\ud800-\\udfff outside a pair)",
};

/** Why this number literal, read as `value`, would not come back as written; null if it would. */
export function numberLiteralFault(literal: string, value: number): string | null {
  if (!Number.isFinite(value)) return FAULTS.overflow;
  if (/^-?\d+$/.test(literal)) return Number.isSafeInteger(value) ? null : FAULTS.unsafeInteger;
  if (value === 0 && /[1-9]/.test(literal.split(/[eE]/)[0] ?? "")) return FAULTS.underflow;
  return null;
}

/** Why this value (already parsed, its literal unknown) is not faithful JSON; null if it is. */
export function valueFault(value: unknown): string | null {
  // Without its literal, a number can only be refused for having no JSON form at all: a large
  // double such as 1e300 is a fine number, and a rounded integer can no longer be told apart.
  if (typeof value === "number") return Number.isFinite(value) ? null : FAULTS.overflow;
  if (typeof value === "string") return isWellFormed(value) ? null : FAULTS.loneSurrogate;
  return null;
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one (the
// code-unit view: no `u` flag). String.prototype.isWellFormed is ES2024, newer than our lib.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a string is valid Unicode (every surrogate in a pair), so UTF-8 can encode it. */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Where a document's numbers and strings break the rule (at most `max`), walking without recursion. */
export function faultsIn(root: unknown, max = 10): JsonFault[] {
  interface Node {
    value: unknown;
    parent: Node | null;
    key: string | number;
  }
  const faults: JsonFault[] = [];
  const pathOf = (node: Node, extra?: string): JsonPath => {
    const path: JsonPath = extra === undefined ? [] : [extra];
    for (let at: Node | null = node; at?.parent; at = at.parent) path.unshift(at.key);
    return path;
  };
  const stack: Node[] = [{ value: root, parent: null, key: "" }];
  for (let node = stack.pop(); node && faults.length < max; node = stack.pop()) {
    const { value } = node;
    if (value instanceof LiteralFault) faults.push({ path: pathOf(node), detail: value.detail });
    else if (typeof value !== "object" || value === null) {
      const fault = valueFault(value);
      if (fault) faults.push({ path: pathOf(node), detail: fault });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], parent: node, key: i });
    } else {
      const keys = Object.keys(value);
      for (const key of keys) {
        if (!isWellFormed(key)) faults.push({ path: pathOf(node, key), detail: FAULTS.loneSurrogateKey });
      }
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push({ value: (value as Record<string, unknown>)[key], parent: node, key });
      }
    }
  }
  return faults.slice(0, max);
}

/** Stands in, during parsing, for a number whose literal would not come back as written. */
class LiteralFault {
  constructor(readonly detail: string) {}
}

// A literal of 16+ digits or an exponent of 3+ digits (outside strings), or a \u escape of a
// surrogate (inside one): only then can a document break the rule, and only then is it parsed
// again, slowly, to find where. Looking at numbers outside strings only matters: ids, tokens and
// hashes in hex (a pull consumer's 100 acks, say) nearly always hold an `e123` or a run of 16
// digits somewhere, which made almost every such body take the slow path.
function suspect(text: string): boolean {
  const n = text.length;
  let digits = 0;
  for (let i = 0; i < n; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 34) {
      // A string: only a \u escape of a surrogate (\uD800-\uDFFF) can make it unfaithful.
      for (i++; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === 34) break;
        if (c === 92) {
          i++;
          if (text.charCodeAt(i) === 117 && SURROGATE_ESCAPE.test(text.slice(i + 1, i + 3))) return true;
        }
      }
      digits = 0;
    } else if (ch >= 48 && ch <= 57) {
      digits++;
      if (digits >= 16) return true;
    } else {
      digits = 0;
      if (ch === 101 || ch === 69) {
        let j = i + 1;
        const sign = text.charCodeAt(j);
        if (sign === 43 || sign === 45) j++;
        let k = j;
        while (k < n && text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57) k++;
        if (k - j >= 3) return true;
      }
    }
  }
  return false;
}

const SURROGATE_ESCAPE = /^[dD][89abcdefABCDEF]$/;

/**
 * Where the JSON text `text` (already known to parse) is not faithful JSON; empty when it is,
 * which a cheap scan settles for nearly every document.
 */
export function faultsInJsonText(text: string): JsonFault[] {
  if (!suspect(text)) return [];
  // The reviver's third argument carries each primitive's source text (TC39 JSON.parse source
  // text access, in Bun and V8): the only way to tell 1e400 or 12345678901234567890 apart
  // from what JSON.parse made of them.
  const marked: unknown = JSON.parse(text, (_key, parsed: unknown, context?: { source?: string }) => {
    if (typeof parsed !== "number" || context?.source === undefined) return parsed;
    const fault = numberLiteralFault(context.source, parsed);
    return fault ? new LiteralFault(fault) : parsed;
  });
  return faultsIn(marked);
}
