// Silent data changes: numbers that JSON.parse would change (1e400 became
// Infinity and was stored as null; 12345678901234567890 was rounded) and strings with lone
// surrogates (x\ud800, x\udfff and x\ufffd became one aggregate) are refused with a 422 naming
// the place, before anything is stored. Bodies are sent as raw text: JSON.stringify could not
// even write some of them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { faultsInJsonText, numberLiteralFault } from "../../src/lib/faithful-json.ts";
import { eventsOf, expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("numbers and strings that would not survive storage", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
  });
  afterAll(async () => {
    await server.stop();
  });

  const commit = (text: string) => server.request("POST", "/v1/commits", text);
  const event = (fields: string) => `{"events": [{"type": "f.x", "aggregate": "f/1", ${fields}}]}`;

  const refused: [string, string, string][] = [
    ["a number that overflows to infinity", event('"payload": {"big": 1e400}'), "/events/0/payload/big"],
    ["a negative one", event('"payload": {"big": [-1E+999]}'), "/events/0/payload/big/0"],
    ["an integer beyond 2^53", event('"payload": {"n": 12345678901234567890}'), "/events/0/payload/n"],
    ["2^53 + 1", event('"payload": {"n": 9007199254740993}'), "/events/0/payload/n"],
    ["a number that underflows to 0", event('"payload": {"tiny": 1e-400}'), "/events/0/payload/tiny"],
    [
      "an unsafe integer in record data",
      '{"records": [{"collection": "f", "id": "1", "data": {"n": -9007199254740993}}]}',
      "/records/0/data/n",
    ],
    [
      "a lone high surrogate in an aggregate",
      '{"events": [{"type": "f.x", "aggregate": "x\\ud800"}]}',
      "/events/0/aggregate",
    ],
    [
      "a lone low surrogate in an aggregate",
      '{"events": [{"type": "f.x", "aggregate": "x\\uDFFF"}]}',
      "/events/0/aggregate",
    ],
    [
      "a lone surrogate in a type",
      '{"events": [{"type": "f.\\ud800", "aggregate": "f/1"}]}',
      "/events/0/type",
    ],
    ["a lone surrogate in a payload string", event('"payload": {"s": "a\\udc00b"}'), "/events/0/payload/s"],
    ["a lone surrogate in a payload key", event('"payload": {"k\\ud800": 1}'), "/events/0/payload/k\ud800"],
    ["surrogates in the wrong order", event('"payload": {"s": "\\udc00\\ud800"}'), "/events/0/payload/s"],
    [
      "a lone surrogate in a collection",
      '{"records": [{"collection": "c\\ud800", "id": "1", "data": {}}]}',
      "/records/0/collection",
    ],
    [
      "a lone surrogate in an event id",
      '{"events": [{"id": "\\ud800", "type": "f.x", "aggregate": "f/1"}]}',
      "/events/0/id",
    ],
  ];
  test.each(refused)("%s is 422 with a pointer", async (_what, body, pointer) => {
    expectProblem(await commit(body), 422, pointer);
  });

  test("nothing of the refused commits was stored; the three aggregates stay apart", async () => {
    expect(await eventsOf(server, "f/1")).toEqual([]);
    for (const aggregate of ["x\\ud800", "x\\udfff", "x\\ufffd"])
      await commit(`{"events": [{"type": "f.x", "aggregate": "${aggregate}"}]}`);
    // Only the valid one (U+FFFD is a real character) was stored, as sequence 1.
    expect((await eventsOf(server, "x\ufffd")).map((e) => e.sequence)).toEqual([1]);
  });

  test("numbers that round-trip and paired surrogates are accepted and come back as sent", async () => {
    const body = event(
      '"payload": {"max": 9007199254740991, "min": -9007199254740991, "float": 1e300, "small": 5e-324, "sum": 0.30000000000000004, "zero": 0e400, "emoji": "\\ud83d\\ude00", "long": "1234567890123456789"}',
    );
    const id = expectStatus(await commit(body), 201).events[0].id;
    const stored = expectStatus(await server.request("GET", `/v1/events/${id}`), 200);
    expect(stored.payload).toEqual({
      max: 9007199254740991,
      min: -9007199254740991,
      float: 1e300,
      small: 5e-324,
      sum: 0.30000000000000004,
      zero: 0,
      emoji: "😀",
      long: "1234567890123456789",
    });
  });

  test("the rule itself, on literals", () => {
    expect(numberLiteralFault("1e400", Number.POSITIVE_INFINITY)).not.toBeNull();
    expect(numberLiteralFault("9007199254740992", 9007199254740992)).not.toBeNull();
    expect(numberLiteralFault("9007199254740991", 9007199254740991)).toBeNull();
    expect(numberLiteralFault("1.5e16", 1.5e16)).toBeNull();
    expect(numberLiteralFault("0.000", 0)).toBeNull();
    expect(numberLiteralFault("-0", -0)).toBeNull();
  });

  test("strings are skipped when looking for suspect numbers: hex ids are not numbers, escapes are followed", () => {
    const at = (text: string) => faultsInJsonText(text).map((f) => f.path);
    // Inside strings, `e123` and runs of 16 digits are letters like any other.
    expect(at('{"id": "dlv_0e123a", "t": "lt_1234567890123456789a", "k1234567890123456e999": true}')).toEqual(
      [],
    );
    // An escaped quote does not end a string; an escaped backslash before `u` is no \u escape.
    expect(at('{"s": "\\"12345678901234567890", "b": "\\\\ud800"}')).toEqual([]);
    // After such strings, numbers are still read as numbers, and surrogate escapes still found.
    expect(at('{"s": "x\\\\", "n": 12345678901234567890}')).toEqual([["n"]]);
    expect(at('{"s": "\\"", "n": [1e400]}')).toEqual([["n", 0]]);
    expect(at('{"s": "ok\\"\\ud800"}')).toEqual([["s"]]);
    expect(at('{"k\\udc00": 1}')).toEqual([["k\udc00"]]);
  });
});
