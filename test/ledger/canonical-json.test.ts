// RFC 8785 (JCS): the ledger's digests and hashes depend on it being exact.
import { expect, test } from "bun:test";
import { canonicalJson } from "../../src/lib/canonical-json.ts";

test("the RFC 8785 §3.2.4 example canonicalizes exactly", () => {
  const input = JSON.parse(
    '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
      '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
  );
  expect(canonicalJson(input)).toBe(
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
      '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
  );
});

test("keys sort by UTF-16 code units (RFC 8785 §3.2.3), integer-like keys included", () => {
  const input = JSON.parse(
    '{"\\u20ac": "Euro", "\\r": "CR", "\\ufb33": "Hebrew", "1": "One", "\\ud83d\\ude00": "Smiley", "\\u0080": "Control", "\\u00f6": "Latin"}',
  );
  // Values in output order (read from the text: parsing it again would move "1" first).
  expect([...canonicalJson(input).matchAll(/:"([A-Za-z]+)"/g)].map((m) => m[1])).toEqual([
    "CR",
    "One",
    "Control",
    "Latin",
    "Euro",
    "Smiley",
    "Hebrew",
  ]);
  // A rebuilt JS object would list "2" and "10" first in numeric order; JCS compares strings.
  expect(canonicalJson({ b: 1, 10: 2, 2: 3, a: { z: 0, 1: [] } })).toBe(
    '{"10":2,"2":3,"a":{"1":[],"z":0},"b":1}',
  );
});

test("numbers follow ECMAScript's Number-to-String", () => {
  expect(canonicalJson([-0, 1e21, 1e-7, 0.000001, 123456789012345680000, 5e-324, 9007199254740991])).toBe(
    "[0,1e+21,1e-7,0.000001,123456789012345680000,5e-324,9007199254740991]",
  );
  expect(() => canonicalJson(Number.NaN)).toThrow();
});

test("a document already in key order and the same document in any other order give the same text", () => {
  const sorted = {
    a: [1, { b: null, c: "x\u2028y", d: [true, false, 1.5e-9] }, []],
    b: { "": 0, "\u00e9": "é", "\ud83d\ude00": { x: -0 } },
    c: undefined,
    z: "\u0000\u001f",
  };
  const shuffled = {
    z: sorted.z,
    b: { "\ud83d\ude00": { x: -0 }, "\u00e9": "é", "": 0 },
    c: undefined,
    a: [1, { d: [true, false, 1.5e-9], c: "x\u2028y", b: null }, []],
  };
  const expected =
    '{"a":[1,{"b":null,"c":"x\u2028y","d":[true,false,1.5e-9]},[]],"b":{"":0,"é":"é","😀":{"x":0}},"z":"\\u0000\\u001f"}';
  expect(canonicalJson(sorted)).toBe(expected);
  expect(canonicalJson(shuffled)).toBe(expected);
  expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow();
});
