/** The list envelope of DESIGN §3: a page of items and the cursor of the next one. */
export function page<T>(
  data: T[],
  limit: number,
  cursor: (last: T) => string | number,
): { data: T[]; next: string | null } {
  const last = data.at(-1);
  return { data, next: data.length === limit && last !== undefined ? String(cursor(last)) : null };
}

export const DEFAULT_LIMIT = 100;
