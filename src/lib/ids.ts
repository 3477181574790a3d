// Identifiers. Prefixed ids (`ep_`, `dlv_`, `cmt_`, `tok_`) start with the creation time so
// that ordering by id is ordering by age: list cursors are then just the last id seen.
const TIME_WIDTH = 11; // base-36 milliseconds: good until the year 5188

export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${base36Time(now)}${randomHex(10)}`;
}

type IdPrefix = "ep" | "dlv" | "cmt" | "tok" | "prp";

/** A string that sorts before every id made at or after `time`, and after those made before. */
export function idBefore(prefix: IdPrefix, time: number): string {
  return `${prefix}_${base36Time(time)}`;
}

// The time part of the last id made: ids are made in bursts (a group commit's) within one millisecond.
let lastTime = Number.NaN;
let lastBase36 = "";

function base36Time(time: number): string {
  if (time !== lastTime) {
    lastBase36 = time.toString(36).padStart(TIME_WIDTH, "0");
    lastTime = time;
  }
  return lastBase36;
}

// Random bytes are drawn 4 KiB at a time: ids are made on the commit path, and one
// getRandomValues call per id costs more than the rest of the id.
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
const DIGIT = "0123456789abcdef";
const pool = new Uint8Array(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let out = "";
  for (let i = 0; i < bytes; i++) out += HEX[pool[used++] as number];
  return out;
}

// The time part of the last UUID made, with its dashes and version digit.
let lastUuidTime = Number.NaN;
let lastUuidPrefix = "";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of milliseconds, then random bits. Event ids made this
 * way arrive in time order, so their unique index grows at its end instead of splitting pages
 * all over the b-tree, as random (v4) ids do.
 */
export function uuidv7(now = Date.now()): string {
  if (now !== lastUuidTime) {
    const time = now.toString(16).padStart(12, "0").slice(-12);
    lastUuidPrefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
    lastUuidTime = now;
  }
  if (used + 10 > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  const b = used;
  used += 10;
  const byte = (i: number) => pool[b + i] as number;
  // After the version 7: 12 random bits; the variant 10 and 14 random bits; 48 random bits.
  return (
    `${lastUuidPrefix}${HEX[byte(0)]}${DIGIT[byte(1) & 0xf]}-${DIGIT[8 | (byte(1) >> 6)]}` +
    `${DIGIT[byte(2) & 0xf]}${HEX[byte(3)]}-${HEX[byte(4)]}${HEX[byte(5)]}${HEX[byte(6)]}` +
    `${HEX[byte(7)]}${HEX[byte(8)]}${HEX[byte(9)]}`
  );
}
