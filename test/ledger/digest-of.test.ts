// A document's digest is made from the parsed body where the commit is normalised (normalize.ts),
// and from the stored text by `outboxd verify`: both must be the same sha256 of the same JCS, for
// every document a client can send, or a commit's ledger no longer verifies.

import { expect, test } from "bun:test";
import { digestOf } from "../../src/ledger/chain.ts";

const documents: string[] = [
  '{"status":"paid","total":1250}',
  '{"total":1250,"status":"paid"}',
  '{"b":{"d":[3,{"z":1,"a":2}],"c":null},"a":[]}',
  '{"10":"ten","2":"two","a":"letter"}',
  '{"__proto__":{"x":1},"constructor":"c","prototype":[1]}',
  '{"n":-0,"f":1.5e-7,"big":12345678901234,"e":1e21}',
  '{"s":"é ü \\u2028 \\ud83d\\ude00 \\"quoted\\" \\\\ back","lone":"\\ud800"}',
  '{"deep":{"deeper":{"deepest":{"b":true,"a":false}}}}',
  "{}",
];

test("the digest from the parsed document equals the digest from its text", () => {
  for (const text of documents) {
    const value: unknown = JSON.parse(text);
    const written = JSON.stringify(value);
    expect(digestOf(written, value)).toBe(digestOf(written));
    expect(digestOf(written, value)).toBe(digestOf(text));
  }
});
