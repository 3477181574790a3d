import { createHash } from "node:crypto";

/**
 * The JSON Canonicalization Scheme (RFC 8785) of a JSON value: no whitespace, object keys sorted
 * by their UTF-16 code units at every depth, strings and numbers exactly as ECMAScript's
 * JSON.stringify writes them (its Number-to-String is what RFC 8785 §3.2.2.3 prescribes). Equal
 * documents give equal text, so their hashes are equal; the ledger's digests depend on it.
 *
 * Written out rather than as a JSON.stringify replacer: a re-built object would list
 * integer-like keys ("2", "10") first in numeric order, whatever order they were inserted in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) {
      throw new TypeError("JSON has no representation for NaN or Infinity");
    }
    // Strings, finite numbers, booleans; undefined (absent) stays undefined as in JSON.stringify.
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  }
  const object = value as Record<string, unknown>;
  const members: string[] = [];
  // The default sort compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
  for (const key of Object.keys(object).sort()) {
    const member = object[key];
    if (member === undefined) continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${members.join(",")}}`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
