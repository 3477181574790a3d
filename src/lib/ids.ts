// Identifiers. Prefixed ids (`ep_`, `dlv_`, `cmt_`, `tok_`) start with the creation time so
// that ordering by id is ordering by age: list cursors are then just the last id seen.
const TIME_WIDTH = 11; // base-36 milliseconds: good until the year 5188

export function newId(prefix: "ep" | "dlv" | "cmt" | "tok", now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(TIME_WIDTH, "0")}${randomHex(10)}`;
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
