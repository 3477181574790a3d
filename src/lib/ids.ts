// Identifiers. Prefixed ids (`ep_`, `dlv_`, `cmt_`, `tok_`) start with the creation time so
// that ordering by id is ordering by age: list cursors are then just the last id seen.
const TIME_WIDTH = 11; // base-36 milliseconds: good until the year 5188

export function newId(prefix: "ep" | "dlv" | "cmt" | "tok", now = Date.now()): string {
  const time = now.toString(36).padStart(TIME_WIDTH, "0");
  const random = Array.from(crypto.getRandomValues(new Uint8Array(10)), (b) =>
    b.toString(16).padStart(2, "0"),
  );
  return `${prefix}_${time}${random.join("")}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(text: string): boolean {
  return UUID.test(text);
}
