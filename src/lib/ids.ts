// Identifiers. Prefixed ids (`ep_`, `dlv_`, `cmt_`, `tok_`) start with the creation time so
// that ordering by id is ordering by age: list cursors are then just the last id seen.
const TIME_WIDTH = 11; // base-36 milliseconds: good until the year 5188

export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${idBefore(prefix, now)}${randomHex(10)}`;
}

type IdPrefix = "ep" | "dlv" | "cmt" | "tok" | "prp";

/** A string that sorts before every id made at or after `time`, and after those made before. */
export function idBefore(prefix: IdPrefix, time: number): string {
  return `${prefix}_${time.toString(36).padStart(TIME_WIDTH, "0")}`;
}

// Random bytes are drawn 4 KiB at a time: ids are made on the commit path, and one
// getRandomValues call per id costs more than the rest of the id.
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
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
  const time = now.toString(16).padStart(12, "0").slice(-12);
  const random = randomHex(10);
  const version = `7${random.slice(0, 3)}`;
  // Variant 10xx in the top bits of the next group.
  const variant = ((Number.parseInt(random.slice(3, 4), 16) & 0x3) | 0x8).toString(16) + random.slice(4, 7);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-${version}-${variant}-${random.slice(7, 19)}`;
}
