// Ids and ISO times are made on every commit; both remember their last time part. They must
// answer exactly what a fresh computation would, whatever the order times come in.
import { expect, test } from "bun:test";
import { idBefore, isUuid, newId, uuidv7 } from "../../src/lib/ids.ts";
import { iso } from "../../src/lib/time.ts";

test("uuidv7: version 7, RFC 9562 variant, the time in its first 48 bits, never the same twice", () => {
  const seen = new Set<string>();
  const start = Date.UTC(2026, 11, 1, 22, 0, 0);
  for (let i = 0; i < 20_000; i++) {
    const now = start + Math.floor(i / 7) * (i % 3 === 0 ? 1 : 1_000_003);
    const id = uuidv7(now);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(isUuid(id)).toBe(true);
    expect(id.slice(0, 8) + id.slice(9, 13)).toBe(now.toString(16).padStart(12, "0"));
    expect(seen.has(id)).toBe(false);
    seen.add(id);
  }
  // Every variant digit occurs: the two random bits there are really drawn.
  expect(new Set([...seen].map((id) => id[19]))).toEqual(new Set(["8", "9", "a", "b"]));
});

test("prefixed ids sort by time, and idBefore sorts before every id of its millisecond and after earlier ones", () => {
  const times = [1_000, 2_000, 1_000, 2_000, 2_001];
  for (const now of times) {
    const id = newId("cmt", now);
    expect(id).toMatch(/^cmt_[0-9a-z]{11}[0-9a-f]{20}$/);
    expect(idBefore("cmt", now) <= id).toBe(true);
    expect(id < idBefore("cmt", now + 1)).toBe(true);
    expect(idBefore("dlv", now)).toBe(`dlv_${now.toString(36).padStart(11, "0")}`);
  }
});

test("iso answers toISOString for any order of times, repeated or not", () => {
  const times = [0, 86_400_000, 0, 86_400_000, 5, 5, 86_400_000, 1_764_626_400_123, 0];
  for (const ms of times) expect(iso(ms)).toBe(new Date(ms).toISOString());
  expect(iso(null)).toBeNull();
  expect(iso(undefined)).toBeNull();
});
